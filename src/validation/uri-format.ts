import { isIP } from 'node:net';
import type { Ajv } from 'ajv';
import { HTTPS_URL_FORMAT, MAX_STRING_LENGTH } from '../catalog/product-schema.ts';

// RFC 3986 §3, ASCII only. Each part is a run of the characters it may hold (unreserved, sub-delims,
// the delimiters it allows, or a %XX escape), and no two adjacent runs share a character that could
// end one and start the next: one pass, no backtracking, whatever the length.
const PLAIN = "A-Za-z0-9\\-._~!$&'()*+,;=";
const SCHEME = '[A-Za-z][A-Za-z0-9+.-]*';
const IP_LITERAL = `\\[(?:[0-9A-Fa-f:.]+|[vV][0-9A-Fa-f]+\\.[${PLAIN}:]+)\\]`;

/** The URI grammar; `escape` is what else a run may hold besides its characters (a %XX escape). */
function uriGrammar(escape: string): { withAuthority: RegExp; without: RegExp } {
  const run = (chars: string) => `(?:[${chars}]${escape})`;
  const tail = `(?:\\?${run(`${PLAIN}:@/?`)}*)?(?:#${run(`${PLAIN}:@/?`)}*)?$`;
  return {
    // scheme://[userinfo@]host[:port]/path…, the host captured (it may be empty).
    withAuthority: new RegExp(
      `^${SCHEME}://(?:${run(`${PLAIN}:`)}*@)?(?<host>${IP_LITERAL}|${run(PLAIN)}*)(?::[0-9]*)?` +
        `(?:/${run(`${PLAIN}:@`)}*)*${tail}`,
    ),
    // scheme:path… without an authority (mailto:, urn:, data:…).
    without: new RegExp(`^${SCHEME}:(?!//)${run(`${PLAIN}:@/`)}*${tail}`),
  };
}
// Most URLs hold no `%`: without the escape alternative the pattern is plain character classes.
const URI = uriGrammar('');
const URI_ESCAPED = uriGrammar('|%[0-9A-Fa-f]{2}');
const WEB_SCHEME = /^https?:/i;

/**
 * Format `uri` as docs/reference.md §5 uses it: an absolute URI (RFC 3986), and a web URL (http, https) with
 * a host. White space, `<>"{}|\^\``, a `%` not followed by two hex digits, a second `#` or any
 * non-ASCII character make a value none (an IRI's characters must be percent-encoded, and a host
 * name in Unicode given in its `xn--` form); an IPv6 literal must be an address. A valid URI of
 * another scheme (`ftp://…`, `mailto:…`) passes; format `https-url` refuses it as not https.
 * Over-long values are refused before any test.
 */
export function isAbsoluteUri(value: string): boolean {
  if (value.length > MAX_STRING_LENGTH) return false;
  const grammar = value.includes('%') ? URI_ESCAPED : URI;
  const host = grammar.withAuthority.exec(value)?.groups?.host;
  if (host === undefined) return grammar.without.test(value) && !WEB_SCHEME.test(value);
  if (host === '') return !WEB_SCHEME.test(value);
  // The pattern only shapes an IPv6 literal; the address parser knows which are addresses.
  return host.startsWith('[') && !/^\[v/i.test(host) ? isIP(host.slice(1, -1)) === 6 : true;
}

/** Format `https-url` of item URLs: an absolute URI (see {@link isAbsoluteUri}) whose scheme is https. */
export const isHttpsUrl = (value: string): boolean => /^https:/i.test(value) && isAbsoluteUri(value);

/** Registers the service's URL formats, `uri` and `https-url`, on an Ajv instance. */
export function addUrlFormats(ajv: Ajv): Ajv {
  ajv.addFormat('uri', { type: 'string', validate: isAbsoluteUri });
  ajv.addFormat(HTTPS_URL_FORMAT, { type: 'string', validate: isHttpsUrl });
  return ajv;
}
