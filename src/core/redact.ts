/** Text put in place of a secret wherever the SDK renders text. */
export const REDACTED = '[REDACTED]'

/** How many issued tokens a client remembers for redaction (oldest forgotten first). */
const MAX_TOKENS = 1024

/**
 * Holds the secrets one client must never show (its key secret and the chat tokens it issued)
 * and scrubs them out of text. The secrets live in private fields, so `util.inspect` and
 * `JSON.stringify` of a `Redactor` (or of anything holding one) reveal nothing.
 * @internal
 */
export class Redactor {
  readonly #secrets: string[] = []
  readonly #tokens = new Set<string>()

  constructor(keySecret: string) {
    this.#secrets.push(keySecret)
  }

  /** Remembers an issued token so that later messages and logs scrub it too. */
  addToken(token: string): void {
    if (token.length === 0 || this.#tokens.has(token)) return
    this.#tokens.add(token)
    if (this.#tokens.size > MAX_TOKENS) {
      const oldest = this.#tokens.values().next().value
      if (oldest !== undefined) this.#tokens.delete(oldest)
    }
  }

  /** Returns `text` with every known secret replaced by {@link REDACTED}. */
  redact(text: string): string {
    let out = text
    for (const secret of this.#secrets) out = replaceAll(out, secret)
    for (const token of this.#tokens) out = replaceAll(out, token)
    return out
  }

  /**
   * Returns a deep copy of a JSON-like value with every string scrubbed, or the value itself when
   * nothing in it needed scrubbing. Keys are scrubbed as well as values.
   */
  redactValue<T>(value: T): T {
    return scrub(value, (s) => this.redact(s), new WeakSet()) as T
  }

  toJSON(): string {
    return 'Redactor'
  }
}

function replaceAll(text: string, secret: string): string {
  return secret.length > 0 && text.includes(secret) ? text.split(secret).join(REDACTED) : text
}

function scrub(value: unknown, redact: (s: string) => string, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redact(value)
  if (value === null || typeof value !== 'object' || seen.has(value)) return value
  seen.add(value)
  if (Array.isArray(value)) {
    const out = value.map((item: unknown) => scrub(item, redact, seen))
    return out.some((item, i) => item !== value[i]) ? out : value
  }
  if (Buffer.isBuffer(value)) return value
  const out: Record<string, unknown> = {}
  let changed = false
  for (const [key, item] of Object.entries(value)) {
    const nextKey = redact(key)
    const next = scrub(item, redact, seen)
    if (nextKey !== key || next !== item) changed = true
    // defineProperty, not assignment: a `__proto__` key stays plain data.
    Object.defineProperty(out, nextKey, { value: next, enumerable: true, writable: true, configurable: true })
  }
  if (!changed) return value
  return out
}
