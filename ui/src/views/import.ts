import { errorText, getJson } from '../api.ts';
import type { BatchStatus } from '../api-types.ts';
import { batchProgress, isTerminal, statusBadge } from '../batch-progress.ts';
import { h, longId, replace, table, type Child } from '../dom.ts';
import { batchLabel, nameLabelBase } from '../../../src/client/batch-label.ts';
import { SheetLayoutError, XLSX_TYPE } from '../../../src/spreadsheets/sheet-layout.ts';
import { TextEncodingError } from '../../../src/spreadsheets/text-encoding.ts';
import { inGroups, isSheet, openImportFile, type ImportFile } from '../import/file-items.ts';
import { previewTable, sentErrorsTable } from '../import/import-tables.ts';
import { previewFile, type FilePreview } from '../import/preview-run.ts';
import {
  placeSentErrors,
  readSentErrors,
  type SentGroup,
  type SentItemErrors,
} from '../import/sent-errors.ts';
import { idempotencyKey, submitGroup, SUBMISSION_SIZE } from '../import/submit-groups.ts';
import type { View } from '../view.ts';
import { poll, type PollOutcome } from '../poller.ts';

/** A batch this import made, the file positions it holds, and its last status read. */
interface Submitted extends SentGroup {
  group: number;
  replayed: boolean;
  status: BatchStatus | null;
  /** Its failed items have been read (once it finished). */
  errorsRead: boolean;
}

/** Which items a submission sends: all that can be sent, or only those the preview found valid (#47). */
type SendMode = 'all' | 'valid';

/**
 * The encodings offered for a CSV, JSON or JSON Lines file (docs/spreadsheets.md#encodings): the value
 * is a WHATWG label; the empty one detects (UTF-8, or UTF-16 by a byte order mark). The first are what
 * spreadsheet programs write in Western Europe and the Americas.
 */
const ENCODINGS: ReadonlyArray<[value: string, label: string]> = [
  ['', 'Detect (UTF-8 / UTF-16)'],
  ['windows-1252', 'Windows-1252 (Western European, Excel "CSV (Comma delimited)")'],
  ['iso-8859-15', 'ISO-8859-15 (Western European, with €)'],
  ['utf-16le', 'UTF-16LE (without byte order mark)'],
  ['utf-16be', 'UTF-16BE (without byte order mark)'],
  ['macintosh', 'Mac OS Roman'],
  ['windows-1250', 'Windows-1250 (Central European)'],
  ['windows-1251', 'Windows-1251 (Cyrillic)'],
  ['iso-8859-2', 'ISO-8859-2 (Central European)'],
  ['shift_jis', 'Shift_JIS (Japanese)'],
  ['gbk', 'GBK (Simplified Chinese)'],
  ['big5', 'Big5 (Traditional Chinese)'],
  ['euc-kr', 'EUC-KR (Korean)'],
];

/** Failed items listed under the submitted batches; each batch's page lists all of its own. */
const MAX_SENT_ERROR_ROWS = 1000;

/**
 * Import a JSON, JSON Lines, CSV or XLSX file: it is read as a stream (XLSX by a Web Worker), a
 * spreadsheet checked for the layout defects that refuse it whole (CONTRACT §11.5), previewed (§10.3)
 * group by group, then submitted in batches of ≤ 1000 with an Idempotency-Key each, all of its items
 * or only the valid ones, whose progress is followed live and whose refused items are listed at their
 * place in the file.
 */
export const importView: View = (main) => {
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status', 'aria-live': 'polite' });
  const previewBox = h('div');
  const submittedBox = h('div', { 'aria-live': 'polite' });
  const sentErrorsBox = h('div');
  const input = h('input', {
    id: 'file',
    type: 'file',
    accept: `.json,.jsonl,.ndjson,.csv,.xlsx,application/json,text/csv,${XLSX_TYPE}`,
  });
  const encodingSelect = h(
    'select',
    { id: 'encoding', 'aria-describedby': 'encoding-help' },
    ...ENCODINGS.map(([value, label]) => h('option', { value }, label)),
  );
  const sendValidButton = h('button', { type: 'button', class: 'primary' });
  const sendAllButton = h('button', { type: 'button', disabled: true }, 'Send');
  /** The send buttons: "Send N valid items" only beside "Send all" when the preview found invalid ones. */
  const toolbar = h('div', { class: 'toolbar sticky', 'data-testid': 'send-toolbar' }, sendAllButton);
  let source: ImportFile | null = null;
  let preview: FilePreview | null = null;
  let submitted: Submitted[] = [];
  let sentErrors: SentItemErrors[] = [];
  let mode: SendMode = 'all';
  let stopPolling = () => {};
  let generation = 0;
  /** One per submission: a resumed one reuses its keys, so no group is submitted twice. */
  let runId = '';

  function offerSending(found: FilePreview) {
    const sendable = found.items - found.unsendable;
    const invalid = found.totals.invalid + found.totals.not_json;
    const valid = found.items - invalid;
    sendAllButton.textContent = `Send all ${sendable} items`;
    sendAllButton.disabled = sendable === 0;
    // The preview names the invalid items; without it (no route, no right) they are not known. When
    // every invalid item is one that cannot be sent anyway, both buttons would send the same items.
    const known = found.unavailable === null;
    replace(toolbar, known && valid < sendable ? sendValidButton : null, sendAllButton);
    sendValidButton.disabled = valid === 0;
    sendValidButton.textContent = `Send ${valid} valid items`;
    const parts = [`${found.items} items read`];
    if (known) parts.push(`${invalid} invalid`);
    if (found.unsendable > 0) parts.push(`${found.unsendable} cannot be sent (left out either way)`);
    status.textContent = `${source?.file.name ?? ''}: ${parts.join('; ')}. Will be sent in batches of at most ${SUBMISSION_SIZE}.`;
  }

  /** The file chosen last, read again when another encoding is chosen. */
  let chosenFile: File | null = null;

  async function choose(chosen: File) {
    chosenFile = chosen;
    const mine = ++generation;
    source?.close();
    source = null;
    preview = null;
    // A new file is a new submission: nothing of the last one's state may answer for it.
    submitted = [];
    sentErrors = [];
    unlisted = [];
    mode = 'all';
    runId = '';
    stopPolling();
    replace(submittedBox);
    replace(sentErrorsBox);
    replace(previewBox);
    message.textContent = '';
    sendAllButton.disabled = true;
    sendAllButton.textContent = 'Send';
    replace(toolbar, sendAllButton);
    status.textContent = `Reading ${chosen.name}…`;
    try {
      const opened = await openImportFile(chosen, { encoding: encodingSelect.value || undefined });
      if (mine !== generation) return opened.close();
      source = opened;
      status.textContent = isSheet(opened)
        ? `Checking the layout of ${chosen.name}…`
        : `Checking the text of ${chosen.name}…`;
      await opened.check();
      const found = await previewFile(opened, (partial) => {
        if (mine === generation) status.textContent = `Previewed ${partial.items} items of ${chosen.name}…`;
      });
      if (mine !== generation) return;
      preview = found;
      replace(
        previewBox,
        found.unavailable ? h('p', { class: 'notice' }, found.unavailable) : previewTable(found, opened),
      );
      offerSending(found);
    } catch (error) {
      if (mine !== generation) return;
      status.textContent = '';
      message.textContent =
        // A byte the encoding cannot read: the message says what to do (save as UTF-8, choose one).
        error instanceof TextEncodingError ||
        (error instanceof SheetLayoutError && error.cause instanceof TextEncodingError)
          ? `${chosen.name} is refused and nothing was sent: ${error.message}.`
          : error instanceof SheetLayoutError
            ? `${chosen.name} is refused and nothing was sent: ${error.message}. Correct the file and choose it again.`
            : `${chosen.name} cannot be read: ${errorText(error)}`;
    }
  }

  function renderSubmitted() {
    const rows: Child[][] = submitted.map((entry) => [
      entry.group + 1,
      longId(entry.batchId, `#/batches/${encodeURIComponent(entry.batchId)}`),
      entry.status ? statusBadge(entry.status.status) : '…',
      entry.status ? batchProgress(entry.status) : '…',
      entry.status ? `${entry.status.upserted} upserted, ${entry.status.failed} failed` : '',
      entry.replayed ? 'already submitted' : '',
    ]);
    replace(
      submittedBox,
      h('h2', {}, 'Submitted batches'),
      table('Submitted batches', ['#', 'Batch', 'Status', 'Progress', 'Items', 'Note'], rows),
    );
  }

  /**
   * Batches that finished with failures, waiting to be listed. One listing runs at a time and takes
   * every batch waiting, since placing a spreadsheet's errors reads the file again: batch after batch
   * finishing while a large file is read would otherwise read it once each, all at once.
   */
  let unlisted: Submitted[] = [];
  /** The file (its generation) whose listing runs, if one does: another file's runs apart. */
  let listing: number | null = null;

  async function listSentErrors(reading: ImportFile) {
    const mine = generation;
    if (listing === mine) return;
    listing = mine;
    try {
      while (unlisted.length > 0 && mine === generation) {
        const finished = unlisted;
        unlisted = [];
        await showSentErrors(finished, reading);
      }
    } finally {
      if (listing === mine) listing = null;
    }
  }

  /** Reads the failed items of the batches that just finished, and lists them at their place in the file. */
  async function showSentErrors(finished: Submitted[], reading: ImportFile) {
    const mine = generation;
    try {
      let failed: SentItemErrors[] = [];
      for (const entry of finished) failed.push(...(await readSentErrors(entry)));
      failed = await placeSentErrors(reading, failed.slice(0, MAX_SENT_ERROR_ROWS - sentErrors.length));
      if (mine !== generation) return;
      sentErrors = [...sentErrors, ...failed].sort((a, b) => a.position - b.position);
      replace(sentErrorsBox, sentErrorsTable(sentErrors, reading));
    } catch (error) {
      if (mine === generation)
        replace(
          sentErrorsBox,
          h('p', { class: 'error' }, `The refused items cannot be listed: ${errorText(error)}`),
        );
    }
  }

  async function refreshBatches(): Promise<PollOutcome> {
    // Another file chosen meanwhile owns the page: this poll's answers are about the last one.
    const mine = generation;
    const reading = source;
    let changed = false;
    const finished: Submitted[] = [];
    for (const entry of submitted) {
      if (entry.status && isTerminal(entry.status)) continue;
      const fresh = await getJson<BatchStatus>(`/products/ingestions/${encodeURIComponent(entry.batchId)}`);
      if (mine !== generation) return 'done';
      changed ||= fresh.updated_at !== entry.status?.updated_at;
      entry.status = fresh;
      if (isTerminal(fresh) && fresh.failed > 0 && !entry.errorsRead) {
        entry.errorsRead = true;
        finished.push(entry);
      }
    }
    renderSubmitted();
    if (finished.length > 0 && reading !== null) {
      unlisted.push(...finished);
      void listSentErrors(reading);
    }
    return submitted.every((entry) => entry.status && isTerminal(entry.status))
      ? 'done'
      : changed
        ? 'changed'
        : 'running';
  }

  /** The items a submission in `sending` mode sends, in file order. */
  async function* itemsToSend(reading: ImportFile, sending: SendMode, skip: ReadonlySet<number>) {
    for await (const item of reading.items()) {
      if (item.text === undefined) continue;
      if (sending === 'valid' && skip.has(item.position)) continue;
      yield item;
    }
  }

  async function submit(sending: SendMode) {
    const reading = source;
    if (!reading || !preview) return;
    const mine = generation;
    // A new submission (not a resumed one) has keys of its own: the groups of "valid only" and
    // "all" differ, so they must never answer for one another.
    if (submitted.length === 0 || sending !== mode) {
      runId = crypto.randomUUID();
      submitted = [];
    }
    mode = sending;
    sendAllButton.disabled = true;
    sendValidButton.disabled = true;
    message.textContent = '';
    stopPolling();
    stopPolling = poll(refreshBatches);
    let group = 0;
    // Labelled as the command-line client labels its batches: `<file name> <k>/<n>` (§11.1, §11.6).
    const sent = preview.items - (sending === 'valid' ? preview.invalidPositions.size : preview.unsendable);
    const groups = Math.ceil(sent / SUBMISSION_SIZE);
    const labelBase = nameLabelBase(reading.file.name);
    try {
      const items = itemsToSend(reading, sending, preview.invalidPositions);
      for await (const texts of inGroups(items, SUBMISSION_SIZE)) {
        if (mine !== generation) return;
        // After a failure, the groups already accepted are skipped.
        if (group < submitted.length) {
          group++;
          continue;
        }
        status.textContent = `Submitting batch ${group + 1}…`;
        const accepted = await submitGroup(
          texts.map((item) => item.text),
          idempotencyKey(runId, group),
          batchLabel(labelBase, group + 1, groups),
          (seconds) => {
            status.textContent = `The service asks to wait ${seconds} s (rate limit); batch ${group + 1} is sent again then.`;
          },
        );
        if (mine !== generation) return;
        submitted.push({
          group,
          batchId: accepted.batch_id,
          replayed: accepted.replayed,
          status: null,
          errorsRead: false,
          positions: texts.map((item) => item.position),
          lines: texts.map((item) => item.line),
        });
        renderSubmitted();
        group++;
      }
      if (mine !== generation) return;
      status.textContent = `Submitted ${group} batch(es); following their progress below.`;
    } catch (error) {
      if (mine !== generation) return;
      message.textContent = `Batch ${group + 1} was not submitted: ${errorText(error)}`;
      const resume = sending === 'valid' ? sendValidButton : sendAllButton;
      resume.textContent = 'Resume the submission';
      resume.disabled = false;
    }
  }

  sendValidButton.addEventListener('click', () => void submit('valid'));
  sendAllButton.addEventListener('click', () => void submit('all'));
  input.addEventListener('change', () => {
    const chosen = input.files?.[0];
    if (chosen) void choose(chosen);
  });
  encodingSelect.addEventListener('change', () => {
    if (chosenFile) void choose(chosenFile);
  });
  const zone = h(
    'div',
    {
      class: 'dropzone',
      ondragover: (event) => {
        event.preventDefault();
        zone.classList.add('over');
      },
      ondragleave: () => zone.classList.remove('over'),
      ondrop: (event) => {
        event.preventDefault();
        zone.classList.remove('over');
        const dropped = (event as DragEvent).dataTransfer?.files[0];
        if (dropped) void choose(dropped);
      },
    },
    h('label', { for: 'file' }, 'Drop a JSON, JSON Lines, CSV or XLSX file here, or choose one'),
    input,
    h(
      'p',
      { class: 'help' },
      'A JSON array, {"items": [...]}, one item per line (.jsonl), or a spreadsheet (.csv, .xlsx) with a row per variant (see docs/spreadsheets.md). Read in pieces: any size works.',
    ),
  );
  const encodingField = h(
    'div',
    { class: 'field' },
    h('label', { for: 'encoding' }, 'Text encoding'),
    encodingSelect,
    h(
      'p',
      { class: 'help', id: 'encoding-help' },
      'For CSV, JSON and JSON Lines files. Detect reads UTF-8, and UTF-16 with a byte order mark; a file in another encoding is refused, naming the first byte it cannot read, until its encoding is chosen here. Excel\'s "CSV (Comma delimited)" is Windows-1252.',
    ),
  );
  main.append(
    h('h1', {}, 'Import a file'),
    encodingField,
    zone,
    message,
    status,
    toolbar,
    previewBox,
    submittedBox,
    sentErrorsBox,
  );
  return () => {
    generation++;
    stopPolling();
    source?.close();
  };
};
