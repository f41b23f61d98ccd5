-- The protocol indexer's tables that `followgraph export` reads, written
-- from the source tables of docs/export.md (schema `public`). Columns the
-- exporter does not read are kept where the indexer has them, so queries
-- that name columns are tested against a realistic shape.
--
-- One deliberate difference: the indexer's address domain checks the
-- `0x` + 40 lower-case hex form; this fixture's does not, so tests can
-- insert the malformed rows the exporter must skip.
CREATE DOMAIN eth_address AS VARCHAR(42);

CREATE TABLE efp_lists (
    nft_chain_id BIGINT NOT NULL,
    nft_contract_address eth_address NOT NULL,
    token_id BIGINT NOT NULL,
    owner eth_address NOT NULL,
    manager eth_address NOT NULL,
    "user" eth_address NOT NULL,
    list_storage_location VARCHAR(255),
    list_storage_location_chain_id BIGINT,
    list_storage_location_contract_address eth_address,
    list_storage_location_slot BYTEA,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (nft_chain_id, nft_contract_address, token_id)
);

CREATE TABLE efp_list_metadata (
    chain_id BIGINT NOT NULL,
    contract_address eth_address NOT NULL,
    slot BYTEA NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    value TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, contract_address, slot, "key")
);

CREATE TABLE efp_account_metadata (
    chain_id BIGINT NOT NULL,
    contract_address eth_address NOT NULL,
    address eth_address NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    value TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, contract_address, address, "key")
);

CREATE TABLE efp_list_records (
    chain_id BIGINT NOT NULL,
    contract_address eth_address NOT NULL,
    slot BYTEA NOT NULL,
    record BYTEA NOT NULL,
    record_version SMALLINT NOT NULL,
    record_type SMALLINT NOT NULL,
    record_data BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, contract_address, slot, record)
);

CREATE TABLE efp_list_record_tags (
    chain_id BIGINT NOT NULL,
    contract_address eth_address NOT NULL,
    slot BYTEA NOT NULL,
    record BYTEA NOT NULL,
    tag VARCHAR(255) NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, contract_address, slot, record, tag)
);

CREATE TABLE events (
    chain_id BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    transaction_index NUMERIC NOT NULL,
    log_index NUMERIC NOT NULL,
    contract_address eth_address NOT NULL,
    event_name VARCHAR(255) NOT NULL,
    event_args JSONB NOT NULL,
    block_hash VARCHAR(66),
    transaction_hash VARCHAR(66),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, block_number, transaction_index, log_index)
);

CREATE TABLE ens_metadata (
    address eth_address PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    avatar TEXT,
    display TEXT,
    records JSON,
    chains TEXT[],
    fresh BIGINT,
    resolver eth_address,
    errors TEXT,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The operator's curated accounts ("who to follow"); older deployments
-- have no header column.
CREATE TABLE efp_recommended (
    "index" BIGINT,
    name TEXT NOT NULL,
    address eth_address PRIMARY KEY,
    avatar TEXT,
    header TEXT,
    class TEXT,
    created_at TIMESTAMPTZ DEFAULT now()
);
