-- Product history entries up to a page long stored as they are, not compressed (docs/performance.md,
-- history). A create, or an update of long texts, makes entries of about 2 kB, just above the
-- default toast target (about 2 kB), where every such entry went through pglz in the chunk's insert:
-- 15 of the 49 ms of a 1000-entry update of every field. Most entries (a price, a name) are far
-- below either target. The cost is disk: such entries take what they weigh, up to three times their
-- compressed size, for HISTORY_RETENTION_DAYS. Only rows written from now on: nothing is rewritten.
ALTER TABLE product_history SET (toast_tuple_target = 8160);
