/** Reading network errors: their codes, their text, and clean copies to keep as causes. */
import type { Redactor } from './redact.ts'

/** undici's own timeout codes: they make an APITimeoutError. */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/** The `code` of an error (or of its causes), e.g. `ECONNRESET`; `''` when it has none. */
export function errorCode(error: unknown, depth = 0): string {
  if (error === null || typeof error !== 'object' || depth > 3) return ''
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') return code
  return errorCode((error as { cause?: unknown }).cause, depth + 1)
}

/** `message (CODE)` of an error, for the SDK's own messages. */
export function describeCause(error: unknown): string {
  if (error instanceof Error) {
    const code = errorCode(error)
    return code === '' || error.message.includes(code) ? error.message : `${error.message} (${code})`
  }
  return String(error)
}

/**
 * A clean copy of a network error to keep as an SDK error's `cause`: same name, message and
 * `code` / `errno` / `syscall`, nested causes copied the same way (3 levels), every known secret
 * scrubbed. A copy, because the original may carry text we cannot scrub reliably (V8 fixes the
 * text of `stack` the first time anything reads it) and belongs to undici.
 */
export function cleanCause(error: unknown, redactor: Redactor, depth = 0): Error | undefined {
  if (!(error instanceof Error) || depth > 3) return undefined
  const copy = new Error(redactor.redact(error.message))
  copy.name = error.name
  for (const key of ['code', 'errno', 'syscall'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key]
    if (typeof value === 'string' || typeof value === 'number') Object.defineProperty(copy, key, { value, enumerable: true })
  }
  copy.stack = `${copy.name}: ${copy.message}`
  const nested = cleanCause(error.cause, redactor, depth + 1)
  if (nested !== undefined) copy.cause = nested
  return copy
}
