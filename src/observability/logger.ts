/** The logging the service's parts use: pino's methods, so any pino logger (or child) fits. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
