import { errorText } from '../api.ts';
import { h, replace } from '../dom.ts';
import { SheetLayoutError, XLSX_TYPE } from '../../../src/spreadsheets/sheet-layout.ts';
import { TextEncodingError } from '../../../src/spreadsheets/text-encoding.ts';
import { MAX_BATCH_ITEMS } from '../../../src/import-pipeline/batches.ts';
import { isSheet, openImportFile, type ImportFile } from '../import/file-items.ts';
import { ImportSubmission, type SendMode, type SubmissionScreen } from '../import/import-submission.ts';
import { previewTable } from '../import/import-tables.ts';
import { pageSubmitter } from '../import/page-submitter.ts';
import { previewFile, type FilePreview } from '../import/preview-run.ts';
import { SubmittedBatches } from '../import/submitted-batches.ts';
import type { View } from '../view.ts';

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

/** The "Text encoding" field: a choice of ENCODINGS, with what it is for. */
function encodingField(select: HTMLSelectElement): HTMLElement {
  return h(
    'div',
    { class: 'field' },
    h('label', { for: 'encoding' }, 'Text encoding'),
    select,
    h(
      'p',
      { class: 'help', id: 'encoding-help' },
      'For CSV, JSON and JSON Lines files. Detect reads UTF-8, and UTF-16 with a byte order mark; a file in another encoding is refused, naming the first byte it cannot read, until its encoding is chosen here. Excel\'s "CSV (Comma delimited)" is Windows-1252.',
    ),
  );
}

/** Where a file is dropped or chosen; `choose` gets it. */
function dropZone(input: HTMLInputElement, choose: (file: File) => void): HTMLElement {
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
        if (dropped) choose(dropped);
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
  return zone;
}

/** What the page says when `name` cannot be read or is refused before anything is sent. */
function refusalText(name: string, error: unknown): string {
  // A byte the encoding cannot read: the message says what to do (save as UTF-8, choose one).
  if (
    error instanceof TextEncodingError ||
    (error instanceof SheetLayoutError && error.cause instanceof TextEncodingError)
  )
    return `${name} is refused and nothing was sent: ${error.message}.`;
  if (error instanceof SheetLayoutError)
    return `${name} is refused and nothing was sent: ${error.message}. Correct the file and choose it again.`;
  return `${name} cannot be read: ${errorText(error)}`;
}

/** The send buttons and the status line for a previewed file. */
interface SendControls {
  toolbar: HTMLElement;
  sendAll: HTMLButtonElement;
  sendValid: HTMLButtonElement;
  status: HTMLElement;
}

/**
 * Offers to send `found`: "Send N valid items" only beside "Send all" when the preview found invalid
 * ones. Without the preview (no route, no right) the invalid items are not known; when every invalid
 * item is one that cannot be sent anyway, both buttons would send the same items.
 */
function offerSending(controls: SendControls, name: string, found: FilePreview) {
  const sendable = found.items - found.unsendable;
  const invalid = found.totals.invalid;
  const valid = found.items - invalid;
  controls.sendAll.textContent = `Send all ${sendable} items`;
  controls.sendAll.disabled = sendable === 0;
  const known = found.unavailable === null;
  replace(controls.toolbar, known && valid < sendable ? controls.sendValid : null, controls.sendAll);
  controls.sendValid.disabled = valid === 0;
  controls.sendValid.textContent = `Send ${valid} valid items`;
  const parts = [`${found.items} items read`];
  if (known) parts.push(`${invalid} invalid`);
  if (found.unsendable > 0) parts.push(`${found.unsendable} cannot be sent (left out either way)`);
  controls.status.textContent = `${name}: ${parts.join('; ')}. Will be sent in batches of at most ${MAX_BATCH_ITEMS}.`;
}

/** What belongs to the file chosen last: a new choice leaves it, so nothing of it answers for the next. */
interface ChosenFile {
  file: File;
  /** Aborted when the page leaves the file: its submission sends nothing more. */
  leave: AbortController;
  source?: ImportFile;
  preview?: FilePreview;
  submission: ImportSubmission;
  batches?: SubmittedBatches;
}

/** How a submission shows on the page: the status line, and the batches followed below it. */
function submissionScreen(status: HTMLElement, batches: SubmittedBatches): SubmissionScreen {
  return {
    sending: (seq) => void (status.textContent = `Submitting batch ${seq}…`),
    waiting: (waitMs, seq) =>
      void (status.textContent = `The service asks to wait ${Math.ceil(waitMs / 1000)} s (rate limit); batch ${seq} is sent again then.`),
    accepted: (part) => batches.add(part),
    refused: (item) => batches.refused(item),
  };
}

/**
 * Import a JSON, JSON Lines, CSV or XLSX file: it is read as a stream (XLSX by a Web Worker), a
 * spreadsheet checked for the layout defects that refuse it whole (docs/spreadsheets.md), previewed
 * batch by batch, then submitted through the import pipeline (docs/import-pipeline.md), all of its
 * items or only the valid ones; the batches are followed live and the refused items listed at their
 * place in the file. The submission's rules live in `ImportSubmission`; this view is its screen.
 */
export const importView: View = (main) => {
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status', 'aria-live': 'polite' });
  const [previewBox, submittedBox, sentErrorsBox] = [h('div'), h('div', { 'aria-live': 'polite' }), h('div')];
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
  const sendValid = h('button', { type: 'button', class: 'primary' });
  const sendAll = h('button', { type: 'button', disabled: true }, 'Send');
  const toolbar = h('div', { class: 'toolbar sticky', 'data-testid': 'send-toolbar' }, sendAll);
  const controls: SendControls = { toolbar, sendAll, sendValid, status };
  let chosen: ChosenFile | null = null;

  /** Leaves the file chosen last: its submission stops sending, its batches are no longer followed. */
  const leave = () => {
    chosen?.leave.abort();
    chosen?.batches?.close();
    chosen?.source?.close();
  };

  async function choose(file: File) {
    leave();
    const mine: ChosenFile = (chosen = {
      file,
      leave: new AbortController(),
      submission: new ImportSubmission(pageSubmitter),
    });
    for (const box of [submittedBox, sentErrorsBox, previewBox]) replace(box);
    message.textContent = '';
    sendAll.disabled = true;
    sendAll.textContent = 'Send';
    replace(toolbar, sendAll);
    status.textContent = `Reading ${file.name}…`;
    try {
      const opened = await openImportFile(file, { encoding: encodingSelect.value || undefined });
      if (mine !== chosen) return opened.close();
      mine.source = opened;
      status.textContent = `Checking the ${isSheet(opened) ? 'layout' : 'text'} of ${file.name}…`;
      await opened.check();
      const found = await previewFile(opened, (partial) => {
        if (mine === chosen) status.textContent = `Previewed ${partial.items} items of ${file.name}…`;
      });
      if (mine !== chosen) return;
      mine.preview = found;
      mine.batches = new SubmittedBatches(opened, submittedBox, sentErrorsBox);
      const notice = found.unavailable ? h('p', { class: 'notice' }, found.unavailable) : null;
      replace(previewBox, notice ?? previewTable(found, opened));
      offerSending(controls, file.name, found);
    } catch (error) {
      if (mine !== chosen) return;
      status.textContent = '';
      message.textContent = refusalText(file.name, error);
    }
  }

  async function submit(mode: SendMode) {
    const mine = chosen;
    if (!mine?.source || !mine.preview || !mine.batches) return;
    const { source, preview, batches } = mine;
    sendAll.disabled = sendValid.disabled = true;
    message.textContent = '';
    const end = await mine.submission.send({
      items: source.items(),
      mode,
      invalid: preview.invalidPositions,
      fileName: source.file.name,
      itemCount: preview.items - (mode === 'valid' ? preview.invalidPositions.size : preview.unsendable),
      signal: mine.leave.signal,
      screen: submissionScreen(status, batches),
    });
    if (mine !== chosen) return;
    if (end.done) {
      status.textContent = `Submitted ${end.batches} batch(es); following their progress below.`;
      return;
    }
    message.textContent = `Batch ${end.seq} was not submitted: ${errorText(end.error)}`;
    const resume = mode === 'valid' ? sendValid : sendAll;
    resume.textContent = 'Resume the submission';
    resume.disabled = false;
  }

  sendValid.addEventListener('click', () => void submit('valid'));
  sendAll.addEventListener('click', () => void submit('all'));
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file) void choose(file);
  });
  // Another encoding reads the file chosen last again.
  encodingSelect.addEventListener('change', () => void (chosen && choose(chosen.file)));
  const zone = dropZone(input, (file) => void choose(file));
  main.append(
    h('h1', {}, 'Import a file'),
    encodingField(encodingSelect),
    zone,
    message,
    status,
    toolbar,
    previewBox,
    submittedBox,
    sentErrorsBox,
  );
  return () => {
    leave();
    chosen = null;
  };
};
