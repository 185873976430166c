/** How one environment variable is read and checked; `src/config.ts` reads them all at start. */

/** Thrown for a setting that cannot be used; the process refuses to start. */
export class ConfigError extends Error {}

/** The integer setting `name` in [min, max], or `fallback` when unset or empty. */
export function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min = 0,
  max = Infinity,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min}${max === Infinity ? ' up' : ` to ${max}`}`);
  }
  return value;
}

/** The setting `name`, which must be `true` or `false`, or `fallback` when unset or empty. */
export function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new ConfigError(`${name} must be true or false`);
}

/** The setting `name`, or undefined when unset or empty. */
export function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}
