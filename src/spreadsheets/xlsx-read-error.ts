/**
 * A file the XLSX reader cannot read as a workbook: not a zip, a zip it does not read (ZIP64,
 * encrypted, another compression), a workbook without the parts it needs, or XML that is not
 * well-formed. The message is the one the command-line client and the dashboard show; `reason` is
 * its part in parentheses.
 */
export class XlsxReadError extends Error {
  readonly reason: string;

  constructor(reason: string, options?: { cause?: unknown }) {
    super(`it is not an XLSX workbook that can be read (${reason})`, options);
    this.name = 'XlsxReadError';
    this.reason = reason;
  }
}
