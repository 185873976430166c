import { ApiError, call, query } from '../api.ts';
import type { Accepted } from '../api-types.ts';
import type { Submitter } from '../../../src/import-pipeline/pipeline-sides.ts';

/**
 * The dashboard's {@link Submitter} (docs/import-pipeline.md): `POST /products/ingestions` with the
 * session's token, each part under its Idempotency-Key and labelled; an `ApiError` with a status is
 * the service's refusal (status 0: not reached, so none), its Retry-After handed on as sent.
 */
export const pageSubmitter: Submitter = {
  // No signal for the request: a batch the service may be accepting right then must not be lost from sight.
  async submit(body, { idempotencyKey, label }) {
    const response = await call(`/products/ingestions${query({ label })}`, {
      method: 'POST',
      body,
      headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    });
    const accepted = (await response.json()) as Accepted;
    return { ...accepted, replayed: response.headers.get('idempotent-replayed') === 'true' };
  },
  refusal: (error) =>
    error instanceof ApiError && error.status !== 0
      ? {
          status: error.status,
          detail: error.message,
          errors: error.fieldErrors.length > 0 ? error.fieldErrors : undefined,
          retryAfter: error.retryAfter,
        }
      : undefined,
};
