import type { FieldError } from '../validation/item-errors.ts';

/** The errors services throw; one HTTP handler (`src/http/error-handler.ts`) renders them. */

/** The kinds of problem the API answers with (docs/reference.md §2); each has a page at `/problems/<slug>`. */
export const PROBLEMS = {
  'validation-error': { status: 400, title: 'Validation failed' },
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'not-acceptable': { status: 406, title: 'Not acceptable' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'idempotency-key-mismatch': { status: 422, title: 'Idempotency key reused with another body' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal server error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemSlug = keyof typeof PROBLEMS;

/** A tenant's submission quota in the current window, which every answer to a submission reports. */
export interface RateLimitQuota {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/** An error a client caused or may see; the HTTP layer renders it, services only throw it. */
export class AppError extends Error {
  readonly slug: ProblemSlug;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  /** When a retry may succeed, for errors that pass (a limit, an outage). */
  readonly retryAfterSeconds: number | undefined;
  readonly #status: number | undefined;

  /** `status` overrides the slug's own where HTTP has a closer one (503 for an `internal-error`). */
  constructor(
    slug: ProblemSlug,
    detail: string,
    options: { errors?: FieldError[]; retryAfterSeconds?: number; status?: number } = {},
  ) {
    super(detail);
    this.slug = slug;
    this.detail = detail;
    this.errors = options.errors;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.#status = options.status;
  }

  get status(): number {
    return this.#status ?? PROBLEMS[this.slug].status;
  }
}

/** A request whose fields or parameters are wrong; `errors` names each one. */
export class ValidationError extends AppError {
  constructor(errors: FieldError[], detail = 'The request has invalid fields; see errors.') {
    super('validation-error', detail, { errors });
  }
}

/** Unknown, malformed or another tenant's id: always the same answer, so ids leak nothing. */
export class NotFoundError extends AppError {
  constructor(detail = 'No such resource.') {
    super('not-found', detail);
  }
}

/** No usable credentials. `tokenSent` decides whether `error="invalid_token"` is added. */
export class UnauthorizedError extends AppError {
  readonly tokenSent: boolean;

  constructor(detail: string, tokenSent: boolean) {
    super('unauthorized', detail);
    this.tokenSent = tokenSent;
  }
}

/**
 * Where a client that sends products to the catalog's own path meant to go: products are written
 * only through a batch (docs/reference.md §4), the most common first guess of a new user.
 */
const METHOD_HINTS: Record<string, string> = {
  'POST /products': ' Products are sent in batches: POST /products/ingestions.',
  'PUT /products': ' Products are sent in batches: POST /products/ingestions.',
  'PATCH /products': ' Products are sent in batches: POST /products/ingestions.',
};

/** A known path asked with a method it does not serve; `allow` lists those it does (the `Allow` header). */
export class MethodNotAllowedError extends AppError {
  constructor(
    method: string,
    path: string,
    readonly allow: readonly string[],
  ) {
    const hint = METHOD_HINTS[`${method} ${path}`] ?? '';
    super('method-not-allowed', `${path} does not serve ${method}; it serves ${allow.join(', ')}.${hint}`);
  }
}

/** Valid credentials that do not allow this operation (no tenant, missing scope). */
export class ForbiddenError extends AppError {
  constructor(detail: string) {
    super('forbidden', detail);
  }
}

/** The `Accept` header names no media type the operation can answer with; `detail` lists those it can. */
export class NotAcceptableError extends AppError {
  constructor(detail: string) {
    super('not-acceptable', detail);
  }
}

/**
 * What was asked for cannot be written in the form asked for (an XLSX cell holds at most 32,767
 * characters, docs/reference.md §11.4): 422, before any byte of the answer. The request itself is valid, so
 * this is a `validation-error` of the selection with HTTP's closer status.
 */
export class UnprocessableSelectionError extends AppError {
  constructor(detail: string) {
    super('validation-error', detail, { status: 422 });
  }
}

/** The request collides with the resource's current state (a limit reached, the last of something). */
export class ConflictError extends AppError {
  constructor(detail: string) {
    super('conflict', detail);
  }
}

/** A body sent with a content coding other than identity (RFC 9110 §15.5.16: the answer names the accepted one). */
export class UnsupportedContentEncodingError extends AppError {
  constructor(encoding: string) {
    super(
      'unsupported-media-type',
      `Content-Encoding ${encoding} is not accepted: send the body uncompressed.`,
    );
  }
}

/** Over a limit: retry in `retryAfterSeconds`; `quota` is the tenant's submission quota, where one applies. */
export class RateLimitedError extends AppError {
  readonly quota: RateLimitQuota | undefined;

  constructor(detail: string, options: { retryAfterSeconds: number; quota?: RateLimitQuota }) {
    super('rate-limited', detail, { retryAfterSeconds: options.retryAfterSeconds });
    this.quota = options.quota;
  }
}
