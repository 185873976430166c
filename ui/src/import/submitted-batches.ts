import { errorText, getJson } from '../api.ts';
import type { BatchStatus } from '../api-types.ts';
import { batchProgress, isTerminal, statusBadge } from '../batch-progress.ts';
import { h, longId, replace, table, type Child } from '../dom.ts';
import { poll, type PollOutcome } from '../poller.ts';
import type { ImportFile } from './file-items.ts';
import { sentErrorsTable } from './import-tables.ts';
import type { RefusedItem, SubmittedPart } from './import-submission.ts';
import { placeSentErrors, readSentErrors, type SentItemErrors } from './sent-errors.ts';

/** A batch this import made, and its last status read. */
interface Followed extends SubmittedPart {
  status: BatchStatus | null;
  /** Its failed items have been read (once it finished). */
  errorsRead: boolean;
}

/** Failed items listed under the submitted batches; each batch's page lists all of its own. */
const MAX_SENT_ERROR_ROWS = 1000;

/**
 * The batches one file's submission made, followed live in a table, and the items the service
 * refused, listed at their place in the file. One per file chosen: `close` stops it, and nothing it
 * reads afterwards is shown.
 */
export class SubmittedBatches {
  readonly #followed: Followed[] = [];
  #sentErrors: SentItemErrors[] = [];
  /**
   * Failed items waiting to be listed. One listing runs at a time and takes every item waiting, since
   * placing a spreadsheet's errors reads the file again: batch after batch finishing while a large
   * file is read would otherwise read it once each, all at once.
   */
  #unlisted: Array<Followed | SentItemErrors> = [];
  #listing = false;
  #closed = false;
  #stopPolling: (() => void) | null = null;

  constructor(
    private readonly reading: ImportFile,
    private readonly submittedBox: HTMLElement,
    private readonly sentErrorsBox: HTMLElement,
  ) {}

  /** Follows a part the service accepted. */
  add(part: SubmittedPart): void {
    this.#followed.push({ ...part, status: null, errorsRead: false });
    this.#render();
    this.#stopPolling ??= poll(() => this.#refresh());
  }

  /** Lists an item the service refused on its own. */
  refused(item: RefusedItem): void {
    this.#unlisted.push({ ...item, batchId: null, external_id: null, sku: null });
    void this.#list();
  }

  close(): void {
    this.#closed = true;
    this.#stopPolling?.();
  }

  #render() {
    const rows: Child[][] = this.#followed.map((entry) => [
      entry.seq,
      longId(entry.batchId, `#/batches/${encodeURIComponent(entry.batchId)}`),
      entry.status ? statusBadge(entry.status.status) : '…',
      entry.status ? batchProgress(entry.status) : '…',
      entry.status ? `${entry.status.upserted} upserted, ${entry.status.failed} failed` : '',
      entry.replayed ? 'already submitted' : '',
    ]);
    replace(
      this.submittedBox,
      h('h2', {}, 'Submitted batches'),
      table('Submitted batches', ['#', 'Batch', 'Status', 'Progress', 'Items', 'Note'], rows),
    );
  }

  async #refresh(): Promise<PollOutcome> {
    let changed = false;
    for (const entry of this.#followed) {
      if (entry.status && isTerminal(entry.status)) continue;
      const fresh = await getJson<BatchStatus>(`/products/ingestions/${encodeURIComponent(entry.batchId)}`);
      // Another file chosen meanwhile owns the page.
      if (this.#closed) return 'done';
      changed ||= fresh.updated_at !== entry.status?.updated_at;
      entry.status = fresh;
      if (isTerminal(fresh) && fresh.failed > 0 && !entry.errorsRead) {
        entry.errorsRead = true;
        this.#unlisted.push(entry);
      }
    }
    this.#render();
    void this.#list();
    if (this.#followed.every((entry) => entry.status && isTerminal(entry.status))) {
      this.#stopPolling = null;
      return 'done';
    }
    return changed ? 'changed' : 'running';
  }

  async #list() {
    if (this.#listing) return;
    this.#listing = true;
    try {
      while (this.#unlisted.length > 0 && !this.#closed) {
        const waiting = this.#unlisted;
        this.#unlisted = [];
        await this.#show(waiting);
      }
    } finally {
      this.#listing = false;
    }
  }

  /** Reads the failed items of the batches that just finished, and lists them at their place in the file. */
  async #show(waiting: Array<Followed | SentItemErrors>) {
    try {
      let failed: SentItemErrors[] = [];
      for (const entry of waiting)
        failed.push(...('status' in entry ? await readSentErrors(entry) : [entry]));
      failed = failed.slice(0, MAX_SENT_ERROR_ROWS - this.#sentErrors.length);
      failed = await placeSentErrors(this.reading, failed);
      if (this.#closed) return;
      this.#sentErrors = [...this.#sentErrors, ...failed].sort((a, b) => a.position - b.position);
      replace(this.sentErrorsBox, sentErrorsTable(this.#sentErrors, this.reading));
    } catch (error) {
      if (!this.#closed)
        replace(
          this.sentErrorsBox,
          h('p', { class: 'error' }, `The refused items cannot be listed: ${errorText(error)}`),
        );
    }
  }
}
