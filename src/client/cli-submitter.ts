import type { Submitter } from '../import-pipeline/pipeline-sides.ts';
import { ClientError, type IngestionClient } from './ingestion-client.ts';

/**
 * The command line's {@link Submitter} (docs/import-pipeline.md): the client's `submit`, whose own
 * retries wait out 429s (by the same `retryAfterMs`), 5xx and network failures; a `ClientError` with
 * a status is the service's refusal.
 */
export function cliSubmitter(client: IngestionClient): Submitter {
  return {
    submit: (body, options) => client.submit(body, options),
    refusal: (error) =>
      error instanceof ClientError && error.status !== undefined
        ? {
            status: error.status,
            detail: error.problem?.detail ?? error.message,
            errors: error.problem?.errors,
          }
        : undefined,
  };
}
