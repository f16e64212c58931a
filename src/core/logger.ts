import type { ClientOverrides } from './options.ts'

/** Anything with these four methods can receive the SDK's logs: `console`, pino, winston, ... */
export interface Logger {
  /** Every attempt: method, path, status, duration (ms), attempt number; `rest[0]` holds them as fields. */
  debug(message: string, ...rest: unknown[]): void
  /** Each retry, with its delay (ms). */
  info(message: string, ...rest: unknown[]): void
  /** Things worth a look that do not fail the call, e.g. a `Retry-After` over the 60 s maximum. */
  warn(message: string, ...rest: unknown[]): void
  /** Errors the SDK reports without throwing (none today; reserved for the same call shape). */
  error(message: string, ...rest: unknown[]): void
}

/** How much the SDK logs: `ClientOverrides.logLevel`'s values (internal name). */
export type LogLevel = NonNullable<ClientOverrides['logLevel']>
