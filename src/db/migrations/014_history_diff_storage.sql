-- The product history's diffs stored as the worker writes them (docs/performance.md, history).
--
-- `text`, not `json`: every diff is made by JSON.stringify, so the check a json column makes on each
-- value (a parse of all of it: 10 of a chunk's 49 ms of insert for an update of every field of 1000
-- products) proves nothing; the reads cast it back (`diff::json`), one page at a time.
--
-- toast_tuple_target 8160 (a page): an entry up to a page long is stored as it is, not compressed.
-- A create, or an update of long texts, makes entries of about 2 kB, just above the default target
-- (about 2 kB), where every entry was compressed with pglz in the insert: 15 ms of that 49. Most
-- entries (a price, a name) are far below either target. The cost is disk: such entries take what
-- they weigh, up to three times their compressed size, for HISTORY_RETENTION_DAYS.
ALTER TABLE product_history ALTER COLUMN diff TYPE text;
ALTER TABLE product_history SET (toast_tuple_target = 8160);
