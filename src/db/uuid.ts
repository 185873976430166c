/**
 * What PostgreSQL's `uuid` type reads in its canonical form. An id that does not match names no row,
 * so it is answered as "not found" without a query (which would fail on the cast).
 */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
