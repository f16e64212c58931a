/**
 * Warnings logged once per process (deprecations: the SDK's own, and the service's notices), not
 * once per client: a job that makes a client per task must not repeat them, and they say
 * something about the code or the service, not about one client. The keys live on `globalThis`
 * under a registered symbol, so every copy of the SDK in the process shares them (the ESM and
 * CommonJS builds, two installed versions).
 */
import type { SdkLogger } from './sdk-logger.ts'

const REGISTRY = Symbol.for('chat-service-sdk.warned-once')

function warned(): Set<string> {
  const holder = globalThis as { [REGISTRY]?: Set<string> | undefined }
  return (holder[REGISTRY] ??= new Set())
}

/**
 * Logs `message` at `warn` through `log` the first time this process sees `key`. Counted only
 * when the logger takes it: a client with `logLevel: 'off'` does not use up the warning of the
 * next client. Returns whether it logged.
 */
export function warnOncePerProcess(log: SdkLogger, key: string, message: string, fields: Record<string, unknown>): boolean {
  const seen = warned()
  if (seen.has(key) || !log.enabled('warn')) return false
  seen.add(key)
  log.log('warn', message, fields)
  return true
}

/** Forgets every warning logged (tests: each starts as a new process would). */
export function forgetWarnedOnce(): void {
  warned().clear()
}
