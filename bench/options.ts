import pg from 'pg';
import { CATALOG_FILE_FORMATS } from './catalog-files.ts';
import { EXPORT_FORMS } from './export.ts';

/**
 * The bench's command line checked before anything runs: a whole run takes ten minutes and more,
 * and a mistake found at its end (a pooled URL where nothing listens, `--repeats` that is not a
 * number) would throw those minutes away. An unknown option is refused by `parseArgs`, which
 * bench/run.ts reports the same way.
 */

/** The parts `--only` names. */
export const BENCH_PARTS = [
  'ingestion',
  'preview',
  'import',
  'export',
  'search',
  'analysis',
  'decode',
  'replica',
] as const;

/** A part of the bench, as `--only` names it. */
export type BenchPart = (typeof BENCH_PARTS)[number];

/**
 * The parts a run takes, in the order they run: without `--only`, every part but `replica`, which
 * builds a PostgreSQL primary and standby of its own and so runs only when named; with it, the part
 * it names, and after `ingestion` the preview too, whose target (preview / 202) belongs with the
 * ingestion figures. `only` is checked already (`benchArgErrors`).
 */
export function partsToRun(only: string | undefined): BenchPart[] {
  if (only === undefined) return BENCH_PARTS.filter((part) => part !== 'replica');
  return only === 'ingestion' ? ['ingestion', 'preview'] : [only as BenchPart];
}

/** The forms `--formats` names, for each part that takes it, from the parts' own lists. */
const BENCH_FORMS: Record<'import' | 'export', readonly string[]> = {
  import: CATALOG_FILE_FORMATS,
  export: EXPORT_FORMS,
};

/** The parts that use the server `--database-url` (or DATABASE_URL) names; `--only replica` builds its own. */
const SERVER_PARTS: readonly string[] = ['ingestion', 'preview', 'import', 'export', 'search'];

/** Whether the run's parts use the server (all of them run without `--only`). */
export const usesServer = (only: string | undefined) => only === undefined || SERVER_PARTS.includes(only);

/** The options as `parseArgs` read them, the ones checked here. */
export interface BenchArgs {
  only?: string;
  repeats?: string;
  formats?: string;
  'import-batches'?: string;
  'pooled-url'?: string;
}

/** What is wrong with `args`, one sentence each; empty when nothing is. `databaseUrl`: the server, if any. */
export function benchArgErrors(args: BenchArgs, databaseUrl: string | undefined): string[] {
  const errors: string[] = [];
  if (args.only !== undefined && !(BENCH_PARTS as readonly string[]).includes(args.only)) {
    errors.push(`--only takes ${listed(BENCH_PARTS)}, not ${args.only}`);
  }
  for (const name of ['repeats', 'import-batches'] as const) {
    const value = args[name];
    if (value !== undefined && !/^[1-9][0-9]*$/.test(value)) {
      errors.push(`--${name} takes a whole number from 1, not ${value}`);
    }
  }
  const onlyKnown = args.only === undefined || (BENCH_PARTS as readonly string[]).includes(args.only);
  if (args.formats !== undefined && onlyKnown) errors.push(...formatErrors(args.formats, args.only));
  if (args['pooled-url'] !== undefined) {
    if (!databaseUrl) {
      errors.push(
        '--pooled-url needs --database-url (or DATABASE_URL): the server to compare with, directly',
      );
    }
    if (args.only !== undefined && args.only !== 'ingestion') {
      errors.push(`--pooled-url is for the ingestion part, which --only ${args.only} leaves out`);
    }
  }
  return errors;
}

/** What is wrong with `--formats` for the parts that run: each form must mean something to one of them. */
function formatErrors(formats: string, only: string | undefined): string[] {
  const parts = (Object.keys(BENCH_FORMS) as Array<keyof typeof BENCH_FORMS>).filter(
    (part) => only === undefined || only === part,
  );
  if (parts.length === 0)
    return [`--formats is for the import and export parts, which --only ${only} leaves out`];
  const known = new Set<string>(parts.flatMap((part) => BENCH_FORMS[part]));
  const unknown = formats
    .split(',')
    .filter(Boolean)
    .filter((form) => !known.has(form));
  const takes = only === undefined ? 'takes' : `for ${only} takes`;
  return unknown.length > 0 ? [`--formats ${takes} ${listed([...known])}, not ${unknown.join(', ')}`] : [];
}

const listed = (names: readonly string[]) => `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;

/**
 * Connects to `url` and runs `SELECT 1`; the reason it failed, or null: nothing listening
 * (ECONNREFUSED), or a server that refused it (its SQLSTATE: a database that does not exist, a
 * login it does not take). The reason names the option and the host, never the URL itself, which
 * may hold a password.
 */
export async function unreachable(option: string, url: string): Promise<string | null> {
  let where = 'its host';
  try {
    const parsed = new URL(url);
    where = `${parsed.hostname}:${parsed.port || '5432'}`;
  } catch {
    return `${option} is not a URL (postgres://user@host:port/database)`;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    const reason = (error as { code?: string; message?: string }).code ?? (error as Error).message;
    return `${option}: SELECT 1 failed at ${where} (${reason})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}
