/** The SDK's log sink behind the public `Logger` and `LogLevel` options: level, redaction, once-only messages. */
import type { LogLevel, Logger } from '../core/logger.ts'
import type { Redactor } from './redact.ts'

/** Every level, quietest first. */
export const LOG_LEVELS: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug']

const MAX_ONCE_KEYS = 1_000

const RANK: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 }

/** The name of the environment variable that sets the log level when the `logLevel` option is absent. */
export const LOG_ENV = 'CHAT_SERVICE_LOG'

/**
 * The log level to use: the option, else a valid `CHAT_SERVICE_LOG` environment variable, else
 * `warn`. `invalidEnv` holds a set but unknown value (e.g. `verbose`), for the caller to report.
 */
export function resolveLogLevel(
  option: LogLevel | undefined,
  env: string | undefined,
): { level: LogLevel; invalidEnv?: string | undefined } {
  if (option !== undefined) return { level: option }
  const fromEnv = env?.trim().toLowerCase()
  if (fromEnv === undefined || fromEnv === '') return { level: 'warn' }
  const level = LOG_LEVELS.find((candidate) => candidate === fromEnv)
  return level === undefined ? { level: 'warn', invalidEnv: env } : { level }
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
  readonly #seen = new Set<string>()

  constructor(logger: Logger, level: LogLevel, redactor: Redactor) {
    this.#logger = logger
    this.#rank = RANK[level]
    this.#redactor = redactor
  }

  /** A sink with the same redaction over another logger or level (and its own once-only memory). */
  derive(logger: Logger, level: LogLevel): SdkLogger {
    return new SdkLogger(logger, level, this.#redactor)
  }

  enabled(level: Exclude<LogLevel, 'off'>): boolean {
    return RANK[level] <= this.#rank
  }

  /**
   * Logs `message` the first time this logger sees `key`, and never again: a long export that
   * meets the same odd field in every page logs it once. Remembers at most 1,000 keys.
   */
  logOnce(key: string, level: Exclude<LogLevel, 'off'>, message: string, fields?: Record<string, unknown>): void {
    if (!this.enabled(level) || this.#seen.has(key) || this.#seen.size >= MAX_ONCE_KEYS) return
    this.#seen.add(key)
    this.log(level, message, fields)
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
