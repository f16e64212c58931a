import type { ValidationIssue } from '../errors/errors.ts'

/** Text put in place of a secret wherever the SDK renders text. */
export const REDACTED = '[REDACTED]'

/**
 * Secrets shorter than this many characters are scrubbed only where they stand as a whole word
 * (not inside a longer run of letters and digits): scrubbing a 2-character secret everywhere would
 * turn `/rest/v1/agents` into `/re[REDACTED]t/v1/agent[REDACTED]`. A real key secret is far longer;
 * the client warns at construction about one this short.
 */
export const MIN_SUBSTRING_SECRET_LENGTH = 8

/** How many issued tokens a client remembers for redaction (oldest forgotten first). */
const MAX_TOKENS = 1024

/**
 * Holds the secrets one client must never show (its key secret and the chat tokens it issued)
 * and scrubs them out of text, in every form a request can carry them: as given, percent-encoded
 * (a secret passed where an id goes lands in the path encoded) and form-encoded. The secrets live
 * in private fields, so `util.inspect` and `JSON.stringify` of a `Redactor` (or of anything holding
 * one) reveal nothing. Every message, path, header, body and cause the SDK shows goes through one.
 * @internal
 */
export class Redactor {
  /** Each secret's forms, longest first, so a form that contains another is scrubbed whole. */
  readonly #patterns: Pattern[] = []
  readonly #tokens = new Map<string, Pattern[]>()

  constructor(keySecret: string) {
    this.#patterns.push(...patternsFor(keySecret))
  }

  /** Remembers an issued token so that later messages and logs scrub it too. */
  addToken(token: string): void {
    if (token.length === 0 || this.#tokens.has(token)) return
    this.#tokens.set(token, patternsFor(token))
    if (this.#tokens.size > MAX_TOKENS) {
      const oldest = this.#tokens.keys().next().value
      if (oldest !== undefined) this.#tokens.delete(oldest)
    }
  }

  /** Returns `text` with every known secret replaced by {@link REDACTED}. */
  redact(text: string): string {
    let out = text
    for (const pattern of this.#patterns) out = pattern(out)
    for (const patterns of this.#tokens.values()) for (const pattern of patterns) out = pattern(out)
    return out
  }

  /**
   * Returns a deep copy of a JSON-like value with every string scrubbed, or the value itself when
   * nothing in it needed scrubbing. Keys are scrubbed as well as values.
   */
  redactValue<T>(value: T): T {
    return scrub(value, (s) => this.redact(s), new WeakSet()) as T
  }

  /** Validation issues with every known secret scrubbed from their messages and path keys (a key may be a secret). */
  redactIssues(issues: readonly ValidationIssue[]): ValidationIssue[] {
    return issues.map((issue) => ({
      ...issue,
      path: issue.path.map((key) => (typeof key === 'string' ? this.redact(key) : key)),
      message: this.redact(issue.message),
    }))
  }

  toJSON(): string {
    return 'Redactor'
  }
}

/** Replaces one form of one secret in a text. */
type Pattern = (text: string) => string

/** The forms a secret can take in what the SDK shows: as given, percent-encoded, form-encoded. */
function patternsFor(secret: string): Pattern[] {
  const forms = new Set([secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)])
  return [...forms]
    .filter((form) => form.length > 0)
    .sort((a, b) => b.length - a.length)
    .map((form) => (secret.length >= MIN_SUBSTRING_SECRET_LENGTH ? substring(form) : wholeWord(form)))
}

function substring(secret: string): Pattern {
  return (text) => (text.includes(secret) ? text.split(secret).join(REDACTED) : text)
}

function wholeWord(secret: string): Pattern {
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const word = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'gu')
  return (text) => (text.includes(secret) ? text.replace(word, REDACTED) : text)
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
