import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { signServiceToken } from '../auth/sign-token.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { createIngestionClient } from '../client/ingestion-client.ts';
import { ingestFile, type IngestOutcome } from '../client/ingest-runner.ts';
import { previewFile } from '../client/preview-runner.ts';
import { createProgress } from '../client/progress.ts';
import { encodingOfLabel } from '../spreadsheets/text-encoding.ts';
import { runCommand, UsageError } from './command.ts';
import { checkIngestPaths } from './ingest-paths.ts';
import { onInterrupt } from './interrupts.ts';
import { DEFAULT_BATCH_SIZE, finishRun, planRun } from './run-plan.ts';

/**
 * `npm run ingest -- FILE|- [--url …] [--token … | --tenant …] [--errors PATH] [--format json|jsonl|csv|xlsx]
 * [--encoding LABEL] [--batch-size N] [--concurrency N] [--quiet] [--label TEXT] [--resume]
 * [--state PATH] [--dry-run [--preview PATH]]` ingests a JSON, JSONL, CSV or XLSX file (docs/spreadsheets.md) of any size as one run (docs/reference.md §11.6),
 * or with --dry-run says what it would do, storing nothing (docs/cli.md). Exit code: 0 every item
 * upserted, 2 some items failed, 1 stopped (bad arguments, service unreachable, token refused, nothing
 * to resume), 130 interrupted (SIGINT, SIGTERM, SIGHUP, or npm gone: docs/cli.md).
 */

const USAGE = `usage: npm run ingest -- <file> [options]
       npx catalog-ingest <file> [options]
  <file>                 a JSON, JSONL, CSV or XLSX file, a pipe, or - for standard input (JSON or JSONL, with --format)
  --url <url>            the service (default: env INGEST_URL, else http://127.0.0.1:3000)
  --token <jwt>          bearer token (default: env INGEST_TOKEN, which keeps it off the command line)
  --tenant <tenant>      mint a token for this tenant with the service's secret, like npm run token
  --errors <path>        where failed items are written (default <file>.errors.jsonl;
                         required when <file> is not a regular file)
  --format <format>      json, jsonl, csv or xlsx; default: by extension (.jsonl/.ndjson, .csv, .xlsx), else json
                         (required when <file> is not a regular file)
  --encoding <label>     the text encoding of a CSV, JSON or JSONL file that is not UTF-8: a WHATWG
                         label such as windows-1252, iso-8859-15, utf-16le, shift_jis (default: UTF-8,
                         or UTF-16 by its byte order mark)
  --batch-size <n>       items per batch, 1–1000 (default 1000)
  --concurrency <n>      batches in flight, 1–16 (default 2)
  --quiet                no progress, only the summary
  --label <text>         batches are labelled "<text> <k>/<n>" (default: the file's name)
  --resume               continue the last unfinished run of <file>: batches it stored are replayed,
                         never stored twice (without it, every run applies the file again)
  --state <path>         the run's state file (default <file>.ingest-run.json)
  --dry-run              store nothing: print what the file would do, item by item in --preview
  --preview <path>       where --dry-run writes each item's action and changes
                         (default <file>.preview.jsonl; required for standard input)`;

const DEFAULT_URL = 'http://127.0.0.1:3000';
/** What a refused first request adds, in a run and in a dry run alike. */
const ADDRESS_HINT = `is the service running there? Give its address with --url or INGEST_URL (default ${DEFAULT_URL})`;

/** The shell's code for a command ended by Ctrl-C (128 + SIGINT), also used after SIGTERM and SIGHUP. */
const EXIT_INTERRUPTED = 130;

const FINISHING =
  'interrupted: finishing the batches already accepted and writing their errors (Ctrl-C again stops at once)';

/**
 * Why --token is discouraged: `npm run` prints the command line it runs, token included (unless
 * `-s`), and any user of the machine can read a process's arguments while it runs.
 */
const TOKEN_ON_COMMAND_LINE =
  '--token puts the token on the command line, where npm run echoes it (unless -s) and ps shows it; ' +
  'prefer INGEST_TOKEN=… npm run -s ingest -- …';

/** Lifetime of a token minted with --tenant: long enough for a very large file. */
const MINTED_TOKEN_TTL_SECONDS = 24 * 3600;

/**
 * --encoding as the encoding TextDecoder reads (docs/spreadsheets.md#encodings): any WHATWG label; an
 * XLSX has no use for one (its XML says its own).
 */
function encodingOption(label: string | undefined, format: string): string | undefined {
  if (label === undefined) return undefined;
  if (encodingOfLabel(label) === null) {
    throw new UsageError(
      `--encoding ${JSON.stringify(label)} is not an encoding label; give a WHATWG label such as ` +
        'windows-1252, iso-8859-15, utf-16le or shift_jis (https://encoding.spec.whatwg.org/#names-and-labels)',
    );
  }
  if (format === 'xlsx')
    throw new UsageError('--encoding is for CSV, JSON and JSONL files: an XLSX says its own');
  return label;
}

function integerOption(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

/**
 * --url (else INGEST_URL, else the default) as the base every request path is appended to: http(s),
 * no credentials (the token is the credential, and a URL's would be printed in every retry message),
 * no query or fragment (they would end up before the path). A path prefix (`https://host/catalog`) is
 * kept. A refusal names where the address came from.
 */
function serviceUrl(option: string | undefined): string {
  const fromEnv = option === undefined ? process.env.INGEST_URL : undefined;
  const raw = option ?? fromEnv ?? DEFAULT_URL;
  const source = fromEnv === undefined ? '--url' : 'INGEST_URL';
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`${source} must be an http(s) URL`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(`${source} must not hold a user name or password; give the token with --token`);
  }
  if (url.search !== '' || url.hash !== '' || raw.includes('?') || raw.includes('#')) {
    throw new UsageError(`${source} must not hold a query or fragment`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The bearer token: --token, else one minted for --tenant, else INGEST_TOKEN. */
async function tokenFrom(values: { token?: string; tenant?: string }): Promise<string> {
  if (values.token !== undefined && values.tenant !== undefined) {
    throw new UsageError('give either --token or --tenant, not both');
  }
  if (values.token) {
    process.stderr.write(`ingest: warning: ${TOKEN_ON_COMMAND_LINE}\n`);
    return values.token;
  }
  if (values.tenant) {
    return signServiceToken(loadConfig(), {
      tenant: values.tenant,
      scope: `${SCOPES.ingestionsWrite} ${SCOPES.ingestionsRead}`,
      ttlSeconds: MINTED_TOKEN_TTL_SECONDS,
      createSecret: false,
    });
  }
  const fromEnv = process.env.INGEST_TOKEN;
  if (fromEnv) return fromEnv;
  throw new UsageError('no token: pass --token, set INGEST_TOKEN, or pass --tenant to mint one');
}

const items = (n: number) => `${n} ${n === 1 ? 'item' : 'items'}`;

/**
 * The closing line (docs/reference.md §11.6): `N items: U upserted, F failed, R replayed`, where the items of
 * batches the service answered as replays count in R only, then where the errors are and the time.
 */
function summary(outcome: IngestOutcome, errorsPath: string): string {
  const failures = outcome.errorLines > 0 ? ` (errors in ${errorsPath})` : '';
  const time = `${outcome.seconds.toFixed(1)} s`;
  const settled = `${outcome.upserted} upserted, ${outcome.failed} failed, ${outcome.replayed} replayed${failures}`;
  if (outcome.stopped !== undefined) {
    return `stopped: ${items(outcome.read)} read, ${outcome.submitted} submitted, ${settled}, ${time}`;
  }
  return `${items(outcome.read)}: ${settled}, ${time}`;
}

/**
 * `--dry-run`: previews the file batch by batch, writes each item's line to the preview file and prints
 * the counts. Exit code 0 when every item is valid, 2 when some are not, 1 when stopped.
 */
async function dryRun(
  input: string,
  values: { format?: string; encoding?: string; preview?: string; token?: string; tenant?: string },
  { baseUrl, batchSize }: { baseUrl: string; batchSize: number },
): Promise<number> {
  if (input === '-' && values.preview === undefined) {
    throw new UsageError('reading standard input with --dry-run needs --preview <path>');
  }
  // The preview file takes the place of the errors file: the same checks (not the input, say where).
  const preview = values.preview ?? `${input}.preview.jsonl`;
  const {
    file,
    format,
    errorsPath: previewPath,
  } = await checkIngestPaths(input, {
    format: values.format,
    errors: preview,
  });
  const client = createIngestionClient({
    baseUrl,
    token: await tokenFrom(values),
    addressHint: ADDRESS_HINT,
  });
  const encoding = encodingOption(values.encoding, format);
  const outcome = await previewFile({ file, format, encoding, previewPath, batchSize, client });
  const { create, update, unchanged, invalid } = outcome.summary;
  // The changes first, then the warnings, then the counts, the last line whatever came before.
  const listed = (title: (count: number) => string, { count, shown }: { count: number; shown: string[] }) => {
    if (count === 0) return;
    const more = count > shown.length ? `, the first ${shown.length} here, all in ${previewPath}` : '';
    process.stderr.write(`${title(count)}${more}:\n${shown.map((line) => `  ${line}\n`).join('')}`);
  };
  listed((n) => `${n} item${n === 1 ? '' : 's'} would change or fail`, outcome.changes);
  listed((n) => `${n} warning${n === 1 ? '' : 's'}`, outcome.warnings);
  process.stderr.write(
    `dry run, nothing stored: ${items(outcome.read)}: ${create} create, ${update} update, ${invalid} invalid, ` +
      `${unchanged} unchanged (per item in ${previewPath}), ${outcome.seconds.toFixed(1)} s\n`,
  );
  return invalid > 0 ? 2 : 0;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      tenant: { type: 'string' },
      errors: { type: 'string' },
      format: { type: 'string' },
      encoding: { type: 'string' },
      'batch-size': { type: 'string' },
      concurrency: { type: 'string', default: '2' },
      quiet: { type: 'boolean', default: false },
      label: { type: 'string' },
      resume: { type: 'boolean', default: false },
      state: { type: 'string' },
      // Gone: kept only to say what replaced it.
      fresh: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      preview: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [input, ...extra] = positionals;
  if (input === undefined || extra.length > 0) throw new UsageError('give exactly one file');
  if (values.fresh) {
    throw new UsageError(
      '--fresh is gone: every run applies the file again; --resume continues an unfinished one',
    );
  }
  const batchSize =
    values['batch-size'] === undefined
      ? undefined
      : integerOption('batch-size', values['batch-size'], 1, 1000);
  const concurrency = integerOption('concurrency', values.concurrency, 1, 16);
  const baseUrl = serviceUrl(values.url);
  if (values['dry-run']) {
    const given = {
      label: values.label !== undefined,
      resume: values.resume,
      state: values.state !== undefined,
    };
    const useless = Object.keys(given).filter((name) => given[name as keyof typeof given]);
    if (useless.length > 0) {
      throw new UsageError(`--dry-run stores no batch: --${useless.join(', --')} has no use there`);
    }
    return dryRun(input, values, { baseUrl, batchSize: batchSize ?? DEFAULT_BATCH_SIZE });
  }
  const { file, format, errorsPath } = await checkIngestPaths(input, values);
  const encoding = encodingOption(values.encoding, format);
  const token = await tokenFrom(values);
  const plan = await planRun({
    file,
    format,
    explicitFormat: values.format,
    encoding,
    batchSize,
    label: values.label,
    resume: values.resume,
    state: values.state,
  });
  if (!values.quiet)
    for (const note of plan.notes)
      process.stderr.write(`ingest: ${note}
`);

  const progress = createProgress(process.stderr, { quiet: values.quiet, startedAt: performance.now() });
  if (plan.batches !== null) progress.batchesCut(plan.batches);
  const client = createIngestionClient({
    baseUrl,
    token,
    onRetry: (reason, ms) => progress.retrying(reason, ms),
    addressHint: ADDRESS_HINT,
  });
  const interruption = new AbortController();
  const removeHandlers = onInterrupt({
    first: () => {
      progress.clear();
      process.stderr.write(`ingest: ${FINISHING}\n`);
      interruption.abort();
    },
    second: () => process.exit(EXIT_INTERRUPTED),
  });
  const outcome = await ingestFile({
    file,
    format,
    encoding,
    errorsPath,
    batchSize: plan.batchSize,
    concurrency,
    client,
    progress,
    signal: interruption.signal,
    runId: plan.runId,
    labelOf: plan.labelOf,
    // The survey read the whole file: a spreadsheet with a layout defect would have stopped it.
    layoutChecked: plan.batches !== null,
  }).finally(removeHandlers);
  if (outcome.stopped === undefined) await finishRun(plan);
  if (outcome.stopped !== undefined) process.stderr.write(`ingest: ${outcome.stopped}\n`);
  process.stderr.write(`${summary(outcome, errorsPath)}\n`);
  if (outcome.interrupted) return EXIT_INTERRUPTED;
  if (outcome.stopped !== undefined) return 1;
  return outcome.anyFailed ? 2 : 0;
}

await runCommand('ingest', USAGE, main);
