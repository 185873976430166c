-- A submission's items move from a row per item (jsonb, split by json_array_elements) to the body
-- as received, {"items": [...]}, in one uncompressed text row per batch. Measured on a 1.7 MB batch:
-- 57 ms to store as rows, 8 ms as one row; read back in 5 ms instead of 19. Text, not json/jsonb: the
-- API has parsed it once already, numbers stay exactly as sent, and strings PostgreSQL cannot hold
-- (U+0000, lone surrogates) no longer make a submission fail before its items are judged.

CREATE TABLE batch_payloads (
  tenant_id text COLLATE "C" NOT NULL,
  batch_id  uuid NOT NULL,
  body      text NOT NULL,
  PRIMARY KEY (tenant_id, batch_id),
  FOREIGN KEY (tenant_id, batch_id) REFERENCES batches (tenant_id, id) ON DELETE CASCADE
);
ALTER TABLE batch_payloads ALTER COLUMN body SET STORAGE EXTERNAL;

-- Batches stored before this migration keep their items, in the new form.
INSERT INTO batch_payloads (tenant_id, batch_id, body)
SELECT tenant_id, batch_id, json_build_object('items', json_agg(payload ORDER BY idx))::text
FROM batch_items
GROUP BY tenant_id, batch_id;

DROP TABLE batch_items;
