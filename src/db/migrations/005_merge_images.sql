-- A variant's images merged by url (docs/reference.md §5) inside the variants upsert, so the worker no longer
-- reads every stored variant's images before writing (docs/performance.md, "A fourteenth look").
--
-- `patch` is what a run of items sent for the variant, already folded together in order: each
-- image {url, angle} or {url} (no angle: keep the stored one, or none for a new url); `[]` when no
-- item sent images. Known urls are updated in place, new ones appended in order, unsent ones kept.
-- A stored image may lack `angle` (a new image sent without one): it reads as null.
-- Its twin in TypeScript is `mergeImages` (src/catalog/merge-items.ts), used by the preview and the
-- worker's narrowed-down paths; test/property/merge-images.test.ts holds the two equal.
CREATE FUNCTION merge_images(stored jsonb, patch jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  merged jsonb := stored;
  image jsonb;
  known boolean;
BEGIN
  -- None sent, or a resend of the same images: nothing to fold in.
  IF patch IS NULL OR patch = '[]'::jsonb OR patch = stored THEN
    RETURN stored;
  END IF;
  FOR image IN SELECT jsonb_array_elements(patch) LOOP
    known := false;
    FOR i IN 0 .. jsonb_array_length(merged) - 1 LOOP
      IF merged -> i -> 'url' = image -> 'url' THEN
        IF image ? 'angle' THEN
          merged := jsonb_set(merged, ARRAY[i::text, 'angle'], image -> 'angle');
        END IF;
        known := true;
        EXIT;
      END IF;
    END LOOP;
    IF NOT known THEN
      merged := merged || jsonb_build_array(image);
    END IF;
  END LOOP;
  RETURN merged;
END
$$;
