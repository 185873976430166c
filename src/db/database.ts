import { openEmbeddedDatabase } from './embedded-database.ts';
import { openServerDatabase } from './server-database.ts';
import type { Database } from './database-types.ts';

export { queryRow, type Database, type PoolConnections, type Queryable } from './database-types.ts';

/** Opens the server when `databaseUrl` is set, else the embedded database under `dataDir`. */
export async function openDatabase(options: {
  databaseUrl: string | undefined;
  databaseSchema?: string | undefined;
  dataDir: string | null;
  poolSize?: number;
  /** On a server: connections for reads beside a transaction (`Database.reader`); none when unset. */
  readerPoolSize?: number;
  /** On a server: connections opened at once and kept open (see {@link openServerDatabase}). */
  keepOpen?: number;
  /** On a server: told when kept connections that were lost cannot be opened again. */
  onRefillError?: (error: Error) => void;
  template?: Blob;
}): Promise<Database> {
  if (options.databaseUrl) {
    return openServerDatabase(options.databaseUrl, {
      max: options.poolSize,
      readers: options.readerPoolSize,
      keepOpen: options.keepOpen,
      onRefillError: options.onRefillError,
      schema: options.databaseSchema,
    });
  }
  return openEmbeddedDatabase(options.dataDir, { template: options.template });
}
