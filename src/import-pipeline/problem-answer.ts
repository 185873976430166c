/** One defect named by the service: an item error (docs/reference.md §7) or an entry of a problem's `errors[]`. */
export interface FieldError {
  field: string;
  code: string;
  message: string;
}

/** What an error answer says: its most useful sentence, and the problem's `errors[]` when it has any. */
export interface ProblemAnswer {
  /** A problem's `detail` or `title`, or the start of a body that is not one. */
  detail: string;
  errors: FieldError[] | undefined;
}

const MAX_BODY_SHOWN = 200;

const isFieldError = (value: unknown): value is FieldError =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as FieldError).field === 'string' &&
  typeof (value as FieldError).code === 'string' &&
  typeof (value as FieldError).message === 'string';

/** Reads an error answer's body (problem+json, or anything a proxy may send instead). */
export async function readProblem(response: Response): Promise<ProblemAnswer> {
  const text = await response.text().catch(() => '');
  let body: { detail?: unknown; title?: unknown; message?: unknown; errors?: unknown } = {};
  try {
    body = (JSON.parse(text) as typeof body | null) ?? {};
  } catch {
    // Not JSON: the start of the text says what happened.
  }
  const said = body.detail ?? body.title ?? body.message;
  const detail =
    typeof said === 'string' && said !== '' ? said : text.slice(0, MAX_BODY_SHOWN) || response.statusText;
  const errors = Array.isArray(body.errors) ? body.errors.filter(isFieldError) : [];
  return { detail, errors: errors.length > 0 ? errors : undefined };
}

/** The first `max` field errors, a line each (`  field: code: message`), and how many more there are. */
export function describeFieldErrors(errors: readonly FieldError[], max = 3): string {
  const lines = errors.slice(0, max).map((e) => `  ${e.field || '(top level)'}: ${e.code}: ${e.message}`);
  if (errors.length > max) lines.push(`  … and ${errors.length - max} more`);
  return lines.join('\n');
}
