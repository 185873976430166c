/** A mistake in how a command was called: reported with the command's usage, exit 1. */
export class UsageError extends Error {}

/** Whether `error` is about how the command was called: ours, or one of `parseArgs`'s (unknown option, …). */
function isUsageError(error: unknown): boolean {
  return (
    error instanceof UsageError || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')
  );
}

/**
 * Runs a command-line `main` and sets the exit code to what it returns. An error becomes one line,
 * `<name>: <message>`, on stderr and exit code 1, followed by the usage when the call itself was wrong,
 * so a typo never ends in a stack trace.
 */
export async function runCommand(name: string, usage: string, main: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await main();
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${name}: ${text}\n${isUsageError(error) ? `${usage}\n` : ''}`);
    process.exitCode = 1;
  }
}
