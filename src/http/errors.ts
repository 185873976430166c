/**
 * The closed set of error codes (CONTRACT §5). Item errors use them all; problem `errors[]` of the
 * envelope and of query parameters use the same words for the same defects.
 */
export const FIELD_ERROR_CODES = [
  'required',
  'unknown_field',
  'invalid_type',
  'invalid_value',
  'invalid_format',
  'https_required',
  'out_of_range',
  'too_few_items',
  'too_many_items',
  'duplicate_key',
  'sku_conflict',
  'internal_error',
] as const;

export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number];

/** One defect of a field or query parameter, as problem `errors[]` and item errors report it. */
export interface FieldError {
  field: string;
  code: FieldErrorCode;
  message: string;
}

/** The kinds of problem the API answers with (CONTRACT §2); each has a page at `/problems/<slug>`. */
export const PROBLEMS = {
  'validation-error': { status: 400, title: 'Validation failed' },
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal server error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemSlug = keyof typeof PROBLEMS;

/** An error a client caused or may see; the HTTP layer renders it, services only throw it. */
export class AppError extends Error {
  readonly slug: ProblemSlug;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly #status: number | undefined;

  /** `status` overrides the slug's own where HTTP has a closer one (503 for an `internal-error`). */
  constructor(
    slug: ProblemSlug,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; status?: number } = {},
  ) {
    super(detail);
    this.slug = slug;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
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
    super('unauthorized', detail, {
      headers: { 'www-authenticate': tokenSent ? 'Bearer error="invalid_token"' : 'Bearer' },
    });
    this.tokenSent = tokenSent;
  }
}

/** Valid credentials that do not allow this operation (no tenant, missing scope). */
export class ForbiddenError extends AppError {
  constructor(detail: string) {
    super('forbidden', detail);
  }
}

/** Over a tenant's limit; `headers` carries Retry-After and the RateLimit-* fields. */
export class RateLimitedError extends AppError {
  constructor(detail: string, headers: Record<string, string>) {
    super('rate-limited', detail, { headers });
  }
}
