-- Catalog search (docs/reference.md §11.7, docs/search.md): each product keeps the words of its external_id,
-- name, and its variants' skus and brands as a tsvector, behind a GIN index.
--
-- The folding is written here with built-in functions only, not the unaccent and pg_trgm
-- extensions: the same SQL then runs on a server and on PGlite, needs no privilege to create an
-- extension, and lives in the schema that migrates (tests migrate one schema each; an extension
-- belongs to one schema of the whole database). Bodies are SQL-standard (`RETURN`), so they are
-- bound at creation and do not depend on the search_path of whoever calls them (an index build,
-- a vacuum).

-- A text as its searchable words, separated by one space: compatibility forms and accents taken
-- apart (NFKD) and the accents dropped, the letters NFKD keeps whole spelled as unaccent spells
-- them (ø → o, ß → ss, æ → ae), lower case, and every run of characters that are neither letters
-- nor digits made one separator. So "ÄPPLARÖ" is "applaro" and "LMP-ARC-2044" is "lmp arc 2044".
CREATE FUNCTION catalog_search_words(value text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN btrim(regexp_replace(lower(
  replace(replace(replace(replace(replace(replace(replace(replace(
    translate(
      regexp_replace(normalize(value, NFKD),
        '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u3099\u309a]+', '', 'g'),
      'øØłŁđĐðÐħĦıŧŦ', 'oOlLdDdDhHitT'),
    'ß', 'ss'), 'ẞ', 'SS'), 'æ', 'ae'), 'Æ', 'AE'), 'œ', 'oe'), 'Œ', 'OE'), 'þ', 'th'), 'Þ', 'TH')),
  '[^[:alnum:]]+', ' ', 'g'));

-- The words of a text as a tsvector, each at its position with `weight`. Built from the words
-- themselves rather than by to_tsvector, whose parser splits some runs of letters and digits
-- ("1e5x" is two tokens to it, one word here). A word over 2,046 bytes (tsvector's limit) is left
-- out: no search can name it either.
CREATE FUNCTION catalog_search_vector(value text, weight text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
  SELECT COALESCE(string_agg(quote_literal(word) || ':' || least(n, 16383) || weight, ' '), '')::tsvector
  FROM regexp_split_to_table(catalog_search_words(COALESCE(value, '')), ' ') WITH ORDINALITY AS w(word, n)
  WHERE word <> '' AND octet_length(word) <= 2046
);

-- A product's search document: its keys (external_id and the skus) weigh most, then its name, then
-- its brands, so a search ranks a key or name match before a brand match.
CREATE FUNCTION catalog_search_document(external_id text, name text, skus text, brands text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN catalog_search_vector(external_id || ' ' || COALESCE(skus, ''), 'A')
  || catalog_search_vector(name, 'B')
  || catalog_search_vector(brands, 'C');

-- A search text as a tsquery: every word, the last one also as a prefix when `prefix`; null when it
-- has no word, and a query nothing matches when a word is longer than any stored one can be.
CREATE FUNCTION catalog_search_query(value text, prefix boolean) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
  SELECT CASE
    WHEN bool_or(octet_length(word) > 2046) THEN $q$'x' & !'x'$q$::tsquery
    ELSE string_agg(quote_literal(word) || CASE WHEN prefix AND n = last THEN ':*' ELSE '' END, ' & ' ORDER BY n)::tsquery
  END
  FROM (
    SELECT word, n, count(*) OVER () AS last
    FROM regexp_split_to_table(catalog_search_words(COALESCE(value, '')), ' ') WITH ORDINALITY AS w(word, n)
    WHERE word <> ''
  ) AS words
);

ALTER TABLE products ADD COLUMN search tsvector NOT NULL DEFAULT '';

UPDATE products p SET search = catalog_search_document(p.external_id, p.name, v.skus, v.brands)
FROM (
  SELECT tenant_id, external_id, string_agg(sku, ' ') AS skus, string_agg(DISTINCT brand, ' ') AS brands
  FROM variants GROUP BY tenant_id, external_id
) v
WHERE p.tenant_id = v.tenant_id AND p.external_id = v.external_id;

CREATE INDEX products_search ON products USING gin (search);
