/**
 * Where UTF-8 bytes stop being UTF-8, by the rules of the WHATWG Encoding Standard's UTF-8 decoder
 * (the same as RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). Pure and
 * browser-safe: the HTTP body parser, the command-line client and the dashboard share it.
 */

/**
 * The index in `bytes` at which the first ill-formed sequence starts (its lead byte, or a stray
 * continuation byte), or -1 when there is none. A sequence cut off by the end of `bytes` is a defect
 * only when `complete` (nothing follows); otherwise more bytes may finish it.
 */
export function utf8DefectAt(bytes: Uint8Array, { complete = true }: { complete?: boolean } = {}): number {
  const length = bytes.length;
  let at = 0;
  while (at < length) {
    const lead = bytes[at]!;
    if (lead < 0x80) {
      at++;
      continue;
    }
    let needed: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) needed = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      needed = 2;
      if (lead === 0xe0) lower = 0xa0;
      else if (lead === 0xed) upper = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      needed = 3;
      if (lead === 0xf0) lower = 0x90;
      else if (lead === 0xf4) upper = 0x8f;
    } else return at;
    for (let k = 1; k <= needed; k++) {
      if (at + k >= length) return complete ? at : -1;
      const next = bytes[at + k]!;
      if (next < lower || next > upper) return at;
      lower = 0x80;
      upper = 0xbf;
    }
    at += needed + 1;
  }
  return -1;
}
