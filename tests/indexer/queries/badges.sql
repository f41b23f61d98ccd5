SELECT holder AS address, event_id, poap_token_id AS token_id,
       owner_as_reported AS owner
FROM poap_holdings
