import {
  MethodNotAllowedError,
  RateLimitedError,
  UnauthorizedError,
  UnsupportedContentEncodingError,
  type AppError,
  type RateLimitQuota,
} from '../errors/app-errors.ts';

/** The RateLimit-* fields of a submission's answer (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(quota: RateLimitQuota): Record<string, string> {
  return {
    'ratelimit-limit': String(quota.limit),
    'ratelimit-remaining': String(quota.remaining),
    'ratelimit-reset': String(quota.resetSeconds),
  };
}

/** The response headers an error's meaning calls for (docs/reference.md §2, §8, §11.8). */
export function errorHeaders(error: AppError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error instanceof UnauthorizedError) {
    headers['www-authenticate'] = error.tokenSent ? 'Bearer error="invalid_token"' : 'Bearer';
  }
  if (error instanceof RateLimitedError && error.quota) Object.assign(headers, rateLimitHeaders(error.quota));
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  // A 415 for a content coding says which codings are accepted.
  if (error instanceof UnsupportedContentEncodingError) headers['accept-encoding'] = 'identity';
  // A 405 lists the methods the path serves (RFC 9110 §15.5.6).
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(', ');
  return headers;
}
