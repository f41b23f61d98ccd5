-- Badge tables of the tests' own (the indexer holds no badges): a
-- deployment that keeps badges in its database exports them through
-- `--query badge_events=...` and `--query badges=...` (queries/ beside this file).
CREATE TABLE poap_events (
    id BIGINT PRIMARY KEY,
    display_order INT NOT NULL UNIQUE,
    fancy_id TEXT NOT NULL,
    name TEXT NOT NULL,
    event_url TEXT NOT NULL,
    image_url TEXT NOT NULL,
    country TEXT NOT NULL,
    city TEXT NOT NULL,
    description TEXT NOT NULL,
    year INT NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL,
    expiry_date TEXT NOT NULL
);

CREATE TABLE poap_holdings (
    holder eth_address NOT NULL,
    event_id BIGINT NOT NULL REFERENCES poap_events (id),
    poap_token_id TEXT NOT NULL,
    owner_as_reported TEXT NOT NULL,
    PRIMARY KEY (holder, event_id)
);
