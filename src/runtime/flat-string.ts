/**
 * `text` as one flat string. V8 returns a long `JSON.stringify` or `join` result as a rope of small
 * young-generation pieces; reading a character joins them into one string now, so only that string
 * stays alive while it waits to be sent, not the pieces it was made of.
 */
export function flatString(text: string): string {
  text.charCodeAt(0);
  return text;
}
