import type { ReplicaReads } from '../db/replica-reads.ts';
import type { StoredProduct } from './ingest-parts.ts';
import { findProductWithLongText, readExportPage } from './export.repository.ts';
import { UnprocessableSelectionError } from '../errors/app-errors.ts';

/** Products read per statement while the catalog is exported. */
export const EXPORT_PAGE_SIZE = 500;

/** The catalog export (docs/reference.md §11.4); knows nothing of HTTP or of the file's form. */
export interface ExportService {
  /**
   * The tenant's products by external_id (those starting with `prefix`, when given), page by page.
   * The first page is read before this resolves, so a database that fails at once fails the
   * request rather than a response already begun; each later page is read when the one before
   * has been taken. With `maxTextLength` (a form whose cells have a limit), a selection holding a
   * longer text is refused first, naming its first product, before any page is read.
   */
  open(
    tenantId: string,
    query: { prefix?: string; maxTextLength?: number },
  ): Promise<AsyncIterable<readonly StoredProduct[]>>;
}

/**
 * Creates the export, which reads through `reads`: from a replica when there is one and it has
 * replayed every write committed before the request (docs/deployment.md#read-replica), else from
 * the primary. Pages are keyset reads (`external_id > last`), each its own short statement:
 * no connection or snapshot is held while a slow client takes the file, PGlite's one session is
 * free between pages for the worker and other requests, and the same SQL serves both databases.
 * Each product is read whole from one snapshot; a product written while the export runs shows as it
 * is when its page is read (docs/export.md).
 */
export function createExportService({
  reads,
  pageSize = EXPORT_PAGE_SIZE,
}: {
  reads: ReplicaReads;
  pageSize?: number;
}): ExportService {
  return {
    async open(tenantId, { prefix, maxTextLength }) {
      // PostgreSQL text cannot hold U+0000, so no stored id starts with a prefix holding it.
      if (prefix?.includes('\u0000')) return pagesOf([]);
      // One source for the whole export, chosen as it begins: a page the replica fails, before the
      // first byte or after, is read again from the primary, which reads the rest.
      const db = await reads.consistentReader();
      if (maxTextLength !== undefined) {
        const tooLong = await findProductWithLongText(db, {
          tenantId,
          prefix: prefix ?? null,
          maxLength: maxTextLength,
        });
        if (tooLong !== null) {
          throw new UnprocessableSelectionError(
            `Product ${JSON.stringify(tooLong)} holds a text longer than ${maxTextLength} characters, ` +
              'more than an XLSX cell holds; export it as CSV or NDJSON, which carry it in full.',
          );
        }
      }
      const read = async (afterExternalId: string | null) => {
        const rows = await readExportPage(db, {
          tenantId,
          afterExternalId,
          fromExternalId: prefix ?? null,
          limit: pageSize,
        });
        // Ordered by external_id, the ids with a prefix are one run from the prefix on: the first
        // id without it ends the export.
        const end = prefix === undefined ? -1 : rows.findIndex((row) => !row.external_id.startsWith(prefix));
        // A full page without that end may have more behind it.
        return { rows: end === -1 ? rows : rows.slice(0, end), more: end === -1 && rows.length === pageSize };
      };
      const first = await read(null);
      return (async function* () {
        let page = first;
        for (;;) {
          if (page.rows.length > 0) yield page.rows;
          const lastId = page.rows.at(-1)?.external_id;
          if (!page.more || lastId === undefined) return;
          page = await read(lastId);
        }
      })();
    },
  };
}

async function* pagesOf(
  pages: ReadonlyArray<readonly StoredProduct[]>,
): AsyncGenerator<readonly StoredProduct[]> {
  yield* pages;
}
