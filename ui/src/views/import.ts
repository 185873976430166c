import { errorText, getJson } from '../api.ts';
import type { BatchStatus } from '../api-types.ts';
import { batchProgress, isTerminal, statusBadge } from '../batch-progress.ts';
import { h, replace, table, type Child } from '../dom.ts';
import { diffText } from '../../../src/client/diff-text.ts';
import { inGroups, readFileItems } from '../import/file-items.ts';
import { previewFile, type FilePreview } from '../import/preview-run.ts';
import { idempotencyKey, submitGroup, SUBMISSION_SIZE } from '../import/submit-groups.ts';
import type { View } from '../view.ts';
import { poll, type PollOutcome } from '../poller.ts';

/** A batch this import made, and its last status read. */
interface Submitted {
  group: number;
  batchId: string;
  replayed: boolean;
  status: BatchStatus | null;
}

function previewTable(preview: FilePreview): HTMLElement {
  const { totals } = preview;
  const counts: Array<[string, number]> = [
    ['Create', totals.create],
    ['Update', totals.update],
    ['Unchanged', totals.unchanged],
    ['Invalid', totals.invalid],
    ['Not JSON', totals.not_json],
  ];
  return h(
    'div',
    {},
    h(
      'dl',
      { class: 'counts', 'data-testid': 'preview-totals' },
      counts.map(([term, count]) => [h('dt', {}, term), h('dd', {}, count)]),
    ),
    table(
      'Preview of the items',
      ['Item', 'External id', 'Action', 'Changes', 'Errors'],
      preview.rows.map((row) => [
        row.position,
        row.external_id ?? '—',
        h('span', { class: `badge action-${row.action}` }, row.action.replace('_', ' ')),
        row.diff.length
          ? h(
              'ul',
              { class: 'plain', 'data-testid': 'preview-changes' },
              row.diff.map((element) => h('li', {}, diffText(element))),
            )
          : '—',
        row.errors.length
          ? h(
              'ul',
              { class: 'plain' },
              row.errors.map((error) =>
                h('li', {}, h('code', {}, error.code), ' ', error.field || '(item)', ': ', error.message),
              ),
            )
          : '—',
      ]),
      'The file holds no items.',
    ),
  );
}

/**
 * Import a JSON or JSON Lines file: it is read as a stream, previewed (CONTRACT §10.3) group by group,
 * then submitted in batches of ≤ 1000 with an Idempotency-Key each, whose progress is followed live.
 */
export const importView: View = (main) => {
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status', 'aria-live': 'polite' });
  const previewBox = h('div');
  const submittedBox = h('div', { 'aria-live': 'polite' });
  const input = h('input', { id: 'file', type: 'file', accept: '.json,.jsonl,.ndjson,application/json' });
  const submitButton = h('button', { type: 'button', class: 'primary', disabled: true }, 'Submit');
  let file: File | null = null;
  let submitted: Submitted[] = [];
  let stopPolling = () => {};
  let generation = 0;
  /** One per chosen file: a resumed submission reuses its keys, so no group is submitted twice. */
  let runId = '';

  async function choose(chosen: File) {
    const mine = ++generation;
    file = chosen;
    runId = crypto.randomUUID();
    submitted = [];
    stopPolling();
    replace(submittedBox);
    replace(previewBox);
    message.textContent = '';
    submitButton.disabled = true;
    status.textContent = `Reading ${chosen.name}…`;
    try {
      const preview = await previewFile(chosen, (partial) => {
        if (mine === generation) status.textContent = `Previewed ${partial.items} items of ${chosen.name}…`;
      });
      if (mine !== generation) return;
      replace(
        previewBox,
        preview.unavailable ? h('p', { class: 'notice' }, preview.unavailable) : previewTable(preview),
      );
      const sendable = preview.items - preview.totals.not_json;
      status.textContent = `${chosen.name}: ${preview.items} items read; ${sendable} can be submitted.`;
      submitButton.textContent = `Submit ${sendable} items in ${Math.ceil(sendable / SUBMISSION_SIZE)} batch(es)`;
      submitButton.disabled = sendable === 0;
    } catch (error) {
      if (mine !== generation) return;
      status.textContent = '';
      message.textContent = `${chosen.name} cannot be read: ${errorText(error)}`;
    }
  }

  function renderSubmitted() {
    const rows: Child[][] = submitted.map((entry) => [
      entry.group + 1,
      h('a', { href: `#/batches/${encodeURIComponent(entry.batchId)}`, class: 'mono' }, entry.batchId),
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

  async function refreshBatches(): Promise<PollOutcome> {
    let changed = false;
    for (const entry of submitted) {
      if (entry.status && isTerminal(entry.status)) continue;
      const fresh = await getJson<BatchStatus>(`/products/ingestions/${encodeURIComponent(entry.batchId)}`);
      changed ||= fresh.updated_at !== entry.status?.updated_at;
      entry.status = fresh;
    }
    renderSubmitted();
    return submitted.every((entry) => entry.status && isTerminal(entry.status))
      ? 'done'
      : changed
        ? 'changed'
        : 'running';
  }

  async function submit() {
    if (!file) return;
    const mine = generation;
    submitButton.disabled = true;
    message.textContent = '';
    stopPolling();
    stopPolling = poll(refreshBatches);
    let group = 0;
    try {
      const wellFormed = (async function* (source: File) {
        for await (const item of readFileItems(source)) if (item.text !== undefined) yield item.text;
      })(file);
      for await (const texts of inGroups(wellFormed, SUBMISSION_SIZE)) {
        if (mine !== generation) return;
        // After a failure, the groups already accepted are skipped.
        if (group < submitted.length) {
          group++;
          continue;
        }
        status.textContent = `Submitting batch ${group + 1}…`;
        const accepted = await submitGroup(texts, idempotencyKey(runId, group), (seconds) => {
          status.textContent = `The service asks to wait ${seconds} s (rate limit); batch ${group + 1} is sent again then.`;
        });
        submitted.push({ group, batchId: accepted.batch_id, replayed: accepted.replayed, status: null });
        renderSubmitted();
        group++;
      }
      status.textContent = `Submitted ${group} batch(es); following their progress below.`;
    } catch (error) {
      message.textContent = `Batch ${group + 1} was not submitted: ${errorText(error)}`;
      submitButton.textContent = 'Resume the submission';
      submitButton.disabled = false;
    }
  }

  submitButton.addEventListener('click', () => void submit());
  input.addEventListener('change', () => {
    const chosen = input.files?.[0];
    if (chosen) void choose(chosen);
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
    h('label', { for: 'file' }, 'Drop a JSON or JSON Lines file here, or choose one'),
    input,
    h(
      'p',
      { class: 'help' },
      'A JSON array, {"items": [...]}, or one item per line (.jsonl). Read in pieces: any size works.',
    ),
  );
  main.append(
    h('h1', {}, 'Import a file'),
    zone,
    message,
    status,
    previewBox,
    h('div', { class: 'toolbar' }, submitButton),
    submittedBox,
  );
  return () => {
    generation++;
    stopPolling();
  };
};
