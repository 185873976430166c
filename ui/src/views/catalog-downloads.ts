import { call, errorText } from '../api.ts';
import { download, h } from '../dom.ts';
import { currentSession } from '../session.ts';
import { SHEET_COLUMNS, XLSX_TYPE } from '../../../src/spreadsheets/sheet-layout.ts';

/** The forms of `GET /products/export` (docs/reference.md §11.4) a person can download, by the `Accept` that asks for each. */
const FORMS = [
  { label: 'Download CSV', accept: 'text/csv', extension: 'csv' },
  { label: 'Download XLSX', accept: XLSX_TYPE, extension: 'xlsx' },
  { label: 'Download NDJSON', accept: 'application/x-ndjson', extension: 'ndjson' },
] as const;

/**
 * The spreadsheet template: the header row of the docs/reference.md §11.5 layout alone, as the CSV export writes it
 * (BOM, the columns in `SHEET_COLUMNS` order, CRLF). No column name needs quoting, so joining them
 * is what `csv-stringify` writes for the export; the browser test compares the two.
 */
export function templateCsv(): string {
  return `\uFEFF${SHEET_COLUMNS.join(',')}\r\n`;
}

/** `catalog-<tenant>-<YYYY-MM-DD>.<extension>`: whose catalog and of which day (UTC), once saved. */
function fileName(extension: string): string {
  const tenant = (currentSession()?.tenant ?? 'unknown').replace(/[^\w.-]+/g, '_');
  return `catalog-${tenant}-${new Date().toISOString().slice(0, 10)}.${extension}`;
}

/**
 * The catalog view's downloads: the whole catalog in each export form, fetched with the session's
 * token (a plain link could not carry it) and saved from an object URL, and the empty template.
 * A refusal (the XLSX export's 422 for a text longer than a cell holds) is shown beside them.
 */
export function catalogDownloads(): HTMLElement {
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status', class: 'help' });
  async function exportAs(form: (typeof FORMS)[number], button: HTMLButtonElement) {
    button.disabled = true;
    status.textContent = `Preparing the ${form.extension.toUpperCase()} file…`;
    try {
      const response = await call('/products/export', { headers: { accept: form.accept } });
      download(await response.blob(), fileName(form.extension));
      message.textContent = '';
      status.textContent = `Downloaded the catalog as ${form.extension.toUpperCase()}.`;
    } catch (error) {
      message.textContent = errorText(error);
      status.textContent = '';
    } finally {
      button.disabled = false;
    }
  }
  const buttons = FORMS.map((form) => {
    const button = h('button', { type: 'button' }, form.label);
    button.addEventListener('click', () => void exportAs(form, button));
    return button;
  });
  return h(
    'section',
    { class: 'downloads', 'aria-label': 'Downloads' },
    h(
      'div',
      { class: 'actions' },
      buttons,
      h(
        'button',
        {
          type: 'button',
          onclick: () => download(new Blob([templateCsv()], { type: 'text/csv' }), 'catalog-template.csv'),
        },
        'Download template',
      ),
    ),
    message,
    status,
  );
}
