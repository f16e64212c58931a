/**
 * The SDK's own deprecations: options and methods still working but on their way out. Each is a
 * row here AND a `@deprecated` TSDoc tag on its declaration (what editors strike through and the
 * API report records; test/core/deprecations.test.ts holds the two to each other). A use warns once
 * per process at `warn` through the client's logger, saying since when and what to use instead;
 * the README's "Support policy" says how long a deprecated API stays.
 *
 * Nothing is deprecated today: both tables are empty, and cost one `size` check per call.
 */
import type { SdkLogger } from './sdk-logger.ts'
import { warnOncePerProcess } from './warn-once.ts'

/** One deprecated option or method. */
export interface Deprecation {
  /** What is deprecated, as the API report names it: `ClientOptions.compression`, `Agents.list`. */
  readonly api: string
  /** The release that deprecated it, e.g. `'0.4.0'`. */
  readonly since: string
  /** What to do instead, one sentence: shown in the warning. */
  readonly instead: string
}

/**
 * Deprecated options, by option name: given to the client, to `withOptions` or to a call (any of
 * them), with a value other than `undefined`.
 */
export const DEPRECATED_OPTIONS = new Map<string, Deprecation>()

/** Deprecated methods, by operation name (`'agents.list'`): warned when a call of that operation is made. */
export const DEPRECATED_OPERATIONS = new Map<string, Deprecation>()

/** Warns once per process for each deprecated option `given` sets. */
export function warnDeprecatedOptions(given: object | undefined, log: SdkLogger): void {
  if (DEPRECATED_OPTIONS.size === 0 || given === undefined) return
  for (const [name, value] of Object.entries(given)) {
    const deprecation = DEPRECATED_OPTIONS.get(name)
    if (deprecation !== undefined && value !== undefined) warn(deprecation, log)
  }
}

/** Warns once per process when `operation` is deprecated. */
export function warnDeprecatedOperation(operation: string, log: SdkLogger): void {
  if (DEPRECATED_OPERATIONS.size === 0) return
  const deprecation = DEPRECATED_OPERATIONS.get(operation)
  if (deprecation !== undefined) warn(deprecation, log)
}

function warn({ api, since, instead }: Deprecation, log: SdkLogger): void {
  warnOncePerProcess(
    log,
    `deprecated-api:${api}`,
    `${api} is deprecated since ${since} and will be removed in a later release: ${instead}`,
    {
      api,
      since,
    },
  )
}
