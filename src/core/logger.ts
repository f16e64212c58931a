import type { Redactor } from './redact.ts'

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

/** How much the SDK logs: `off` nothing, `error`, `warn` (default), `info`, `debug` (every attempt). */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug'

/** Every level, quietest first. */
export const LOG_LEVELS: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug']

const RANK: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 }

/** The log level to use: the option, else a valid `CHAT_SERVICE_LOG` environment variable, else `warn`. */
export function resolveLogLevel(option: LogLevel | undefined, env: string | undefined): LogLevel {
  if (option !== undefined) return option
  const fromEnv = env?.trim().toLowerCase()
  return LOG_LEVELS.find((level) => level === fromEnv) ?? 'warn'
}

/**
 * The SDK's internal log sink: drops what is below the level, scrubs secrets out of the message and
 * of the structured fields, prefixes `chat-service-sdk`, and never lets a throwing logger break a request.
 * @internal
 */
export class SdkLogger {
  readonly #logger: Logger
  readonly #rank: number
  readonly #redactor: Redactor

  constructor(logger: Logger, level: LogLevel, redactor: Redactor) {
    this.#logger = logger
    this.#rank = RANK[level]
    this.#redactor = redactor
  }

  enabled(level: Exclude<LogLevel, 'off'>): boolean {
    return RANK[level] <= this.#rank
  }

  log(level: Exclude<LogLevel, 'off'>, message: string, fields?: Record<string, unknown>): void {
    if (!this.enabled(level)) return
    const text = this.#redactor.redact(`chat-service-sdk: ${message}`)
    try {
      if (fields === undefined) this.#logger[level](text)
      else this.#logger[level](text, this.#redactor.redactValue(fields))
    } catch {
      // A logger that throws must not turn a good response into a failure.
    }
  }
}
