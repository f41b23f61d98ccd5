-- After the indexer's schema (01-schema.sql): the tail's read-only role.
CREATE ROLE followgraph_tail LOGIN PASSWORD 'tail';
GRANT SELECT ON ALL TABLES IN SCHEMA public TO followgraph_tail;
