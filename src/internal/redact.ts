/**
 * The one owner of secrets: everything the SDK shows (error messages, paths, headers, bodies,
 * causes, log lines, traces, response metadata) passes through a {@link Redactor} first.
 *
 * How a secret is found, whatever the server does with it:
 *
 * - **Encoded and escaped forms.** Text is compared in a canonical form: percent-encoding
 *   (`%2B`, UTF-8 sequences), form-encoding (`+` for a space), JSON string escapes (`\"`, `\\`,
 *   `\/`, `\n`, `\u00e9`, either case), `\xHH`, and HTML character references (`&quot;`, `&#34;`,
 *   `&#x22;`) are decoded, repeatedly (up to {@link MAX_DECODE_PASSES} times, so a secret escaped
 *   twice, JSON inside JSON, or JSON inside a URL, is found too); the secret is brought to the same
 *   canonical form. A match is mapped back to the characters of the original text it came from,
 *   and only those are replaced. A secret is also looked for as its UTF-8 bytes read as Latin-1
 *   (how a header echoing a non-ASCII secret arrives) and lower-cased (how a header NAME arrives).
 * - **Fragments.** A run of at least {@link MIN_FRAGMENT_LENGTH} characters that begins or ends a
 *   secret is scrubbed wherever it stands: what is left of a secret cut by a size cap (the 64 KiB
 *   of an error body), by the server, or by an escape the cut split. See that constant for why 8.
 * - **Depth.** Values are walked at most `MAX_RESPONSE_DEPTH` levels deep; anything deeper is replaced
 *   by a note, never walked (a response nested thousands of levels deep cannot overflow the stack).
 *
 * Finding is indexed, not a loop over secrets: each secret's first and last 8 canonical characters
 * are keys of one map, so scrubbing costs one table lookup per character of text, whether the
 * client remembers one secret or 1,025.
 */
import type { ValidationIssue } from '../errors/errors.ts'
import { MAX_RESPONSE_DEPTH } from '../schemas/json.ts'
import { madeOnce } from '../schemas/made-once.ts'

/** Text put in place of a secret wherever the SDK renders text. */
export const REDACTED = '[REDACTED]'

/**
 * Secrets shorter than this many characters are scrubbed only where they stand as a whole word
 * (not inside a longer run of letters and digits): scrubbing a 2-character secret everywhere would
 * turn `/rest/v1/agents` into `/re[REDACTED]t/v1/agent[REDACTED]`. A real key secret is far longer;
 * the client warns at construction about one this short.
 */
export const MIN_SUBSTRING_SECRET_LENGTH = 8

/**
 * The shortest piece of a secret scrubbed on its own: a run of 8 or more characters that begins or
 * ends a secret (in any of its forms) is scrubbed wherever it appears, so a secret cut anywhere
 * shows at most 7 of its characters on either side of the cut.
 *
 * Why 8: it is the length under which the client already calls a key secret too short to be real
 * ({@link MIN_SUBSTRING_SECRET_LENGTH}), so 7 characters are less than any secret worth the name
 * holds, and at most 7 × 6 = 42 bits of a random secret of 32 or more characters (190 bits or
 * more) can show. Shorter pieces would be found by chance: with the key secret and 1,024 tokens
 * remembered there are 2,050 secret ends, and a 64 KiB body holds one of their 4-character runs
 * by chance about 9 times (65,536 × 2,050 / 62^4), one of their 8-character runs about once in
 * 1.6 million bodies. What a secret's first 8 characters share with other text (a fixed prefix
 * such as `sk_live_`, the header every JWT starts with) is scrubbed too: that is cheaper than
 * showing a piece of a secret.
 */
export const MIN_FRAGMENT_LENGTH = MIN_SUBSTRING_SECRET_LENGTH

/** How many times encodings are peeled off a text (each pass decodes one layer). */
export const MAX_DECODE_PASSES = 4

/** How many issued tokens a client remembers for redaction (oldest forgotten first). */
const MAX_TOKENS = 1024

/** What a value nested deeper than `MAX_RESPONSE_DEPTH` levels is shown as. */
export const TOO_DEEP = `[nested more than ${MAX_RESPONSE_DEPTH} levels deep: not shown]`

/**
 * Holds the secrets one client must never show (its key secret and the chat tokens it issued)
 * and scrubs them out of text and values (see the module comment for the forms it finds). The
 * secrets live in private fields, so `util.inspect` and `JSON.stringify` of a `Redactor` (or of
 * anything holding one) reveal nothing.
 * @internal
 */
export class Redactor {
  readonly #index = new SecretIndex()
  /** Issued tokens, oldest first, with the canonical forms each one added to the index. */
  readonly #tokens = new Map<string, string[]>()

  constructor(keySecret: string) {
    for (const form of formsOf(keySecret)) this.#index.add(form)
  }

  /** Remembers an issued token so that later messages and logs scrub it too. */
  addToken(token: string): void {
    if (token.length === 0 || this.#tokens.has(token)) return
    const forms = formsOf(token)
    for (const form of forms) this.#index.add(form)
    this.#tokens.set(token, forms)
    if (this.#tokens.size > MAX_TOKENS) {
      const [oldest, oldForms] = this.#tokens.entries().next().value as [string, string[]]
      this.#tokens.delete(oldest)
      for (const form of oldForms) this.#index.remove(form)
    }
  }

  /**
   * Whether the client has issued tokens it remembers. Those may be forgotten (the oldest, once
   * 1,024 newer ones came), so what may echo one is scrubbed while it is still known; the key
   * secret is never forgotten, and scrubbing against it may wait until a value is shown.
   */
  get remembersTokens(): boolean {
    return this.#tokens.size > 0
  }

  /** Returns `text` with every known secret, and every piece of one at least 8 characters long, replaced by {@link REDACTED}. */
  redact(text: string): string {
    if (text.length === 0) return text
    if (!ENCODED.test(text)) {
      const ranges = this.#index.find(text)
      return ranges.length === 0 ? text : replaceRanges(text, ranges, undefined)
    }
    const canon = canonical(text)
    const ranges = this.#index.find(canon.text)
    return ranges.length === 0 ? text : replaceRanges(text, ranges, canon)
  }

  /**
   * `headers` with every name and value scrubbed; `headers` itself (no copy) when nothing needed
   * it, as for almost every response. Names are scrubbed too: a header named after a secret shows
   * it, lower-cased.
   */
  redactHeaders(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
    for (const name in headers) {
      const value = headers[name] as string
      if (this.redact(name) !== name || this.redact(value) !== value) return this.redactValue(headers)
    }
    return headers
  }

  /**
   * Returns a copy of a JSON-like value with every string scrubbed (keys as well as values), and
   * anything nested deeper than `MAX_RESPONSE_DEPTH` levels replaced by {@link TOO_DEEP}; or the value
   * itself when nothing in it needed either.
   */
  redactValue<T>(value: T): T {
    return scrub(value, (s) => this.redact(s), new Map(), 0) as T
  }

  /** Validation issues with every known secret scrubbed from their messages and path keys (a key may be a secret). */
  redactIssues(issues: readonly ValidationIssue[]): ValidationIssue[] {
    return issues.map((issue) => ({
      ...issue,
      path: issue.path.map((key) => (typeof key === 'string' ? this.redact(key) : key)),
      message: this.redact(issue.message),
      ...(issue.branches === undefined ? {} : { branches: issue.branches.map((branch) => this.redactIssues(branch)) }),
    }))
  }

  /**
   * Remembers, as tokens, the secrets a response carries in its members named `fields` (a chat
   * `token`), before anything shows that response:
   * - a parsed body: every string inside those members, at any depth up to `MAX_RESPONSE_DEPTH`;
   * - a body that did not parse (cut short, not JSON): the value after each `"token":`, `'token':`
   *   or `token=` in its text, decoded as {@link Redactor.redact} decodes; a value the text ends in
   *   (cut) is remembered when it is at least {@link MIN_FRAGMENT_LENGTH} characters long.
   */
  rememberSecretsIn(body: unknown, fields: readonly string[]): void {
    if (typeof body === 'string') {
      for (const value of valuesInText(canonical(body).text, fields)) this.addToken(value)
    } else {
      rememberIn(body, fields, 0, (secret) => {
        this.addToken(secret)
      })
    }
  }

  toJSON(): string {
    return 'Redactor'
  }
}

/** `text` with the canonical `ranges` (mapped back through `canon`'s spans) replaced by {@link REDACTED}. */
function replaceRanges(text: string, ranges: readonly number[], canon: Canonical | undefined): string {
  let out = ''
  let at = 0
  for (let i = 0; i < ranges.length; i += 2) {
    const first = ranges[i] as number
    const last = (ranges[i + 1] as number) - 1
    const start = canon?.start === undefined ? first : (canon.start[first] as number)
    const end = canon?.end === undefined ? last + 1 : (canon.end[last] as number)
    out += `${text.slice(at, start)}${REDACTED}`
    at = end
  }
  return out + text.slice(at)
}

/** The canonical forms a secret is looked for in: as given, as UTF-8 read as Latin-1, lower-cased. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, Buffer.from(secret, 'utf8').toString('latin1'), secret.toLowerCase()].map((form) => canonical(form).text))
  forms.delete('')
  return [...forms]
}

/**
 * The canonical forms of the secrets, indexed by their first and last {@link MIN_FRAGMENT_LENGTH}
 * characters (their anchors); forms shorter than that are kept apart and matched as whole words.
 *
 * Finding anchors in a text: with a few of them (the key secret alone has 2 to 6), one native
 * `indexOf` each; with many (1,024 tokens), one pass over the text that hashes each run of 4
 * characters into a 65,536-entry table of the anchors' first 4 and looks up only the runs found
 * there (3 % of them with 2,050 anchors), so the cost stays one table read per character.
 */
class SecretIndex {
  /** By anchor: the forms that start with it (sorted) and the reversed forms that end with it (sorted). */
  readonly #anchors = new Map<string, Anchor>()
  /** The same, as an array, for the `indexOf` path. */
  #list: (readonly [string, Anchor])[] = []
  /** How many anchors hash to each value of {@link quadHash} (saturating at 255). */
  readonly #quads = new Uint8Array(1 << 16)
  /** Forms too short to anchor, with how many secrets share each. */
  readonly #short = new Map<string, number>()

  add(form: string): void {
    if (form.length < MIN_FRAGMENT_LENGTH) {
      this.#short.set(form, (this.#short.get(form) ?? 0) + 1)
      return
    }
    const first = this.#anchor(form.slice(0, MIN_FRAGMENT_LENGTH))
    insertSorted(first.starts, form)
    first.longestStart = Math.max(first.longestStart, form.length)
    const last = this.#anchor(form.slice(-MIN_FRAGMENT_LENGTH))
    insertSorted(last.ends, reverse(form))
    last.longestEnd = Math.max(last.longestEnd, form.length)
  }

  remove(form: string): void {
    if (form.length < MIN_FRAGMENT_LENGTH) {
      const count = (this.#short.get(form) ?? 0) - 1
      if (count > 0) this.#short.set(form, count)
      else this.#short.delete(form)
      return
    }
    this.#release(form.slice(0, MIN_FRAGMENT_LENGTH), 'starts', form)
    this.#release(form.slice(-MIN_FRAGMENT_LENGTH), 'ends', reverse(form))
  }

  /**
   * The ranges of `text` to scrub, as a flat list `[start, end, start, end, ...]`, sorted and
   * merged where they overlap (adjacent ones stay apart: two secrets in a row are two redactions).
   */
  find(text: string): readonly number[] {
    let found: number[] | undefined
    if (text.length >= MIN_FRAGMENT_LENGTH) {
      const list = this.#list
      if (list.length <= FEW_ANCHORS) {
        for (let k = 0; k < list.length; k++) {
          const [key, anchor] = list[k] as readonly [string, Anchor]
          for (let at = text.indexOf(key); at >= 0; at = text.indexOf(key, at + 1)) extend(text, at, anchor, (found ??= []))
        }
      } else {
        const quads = this.#quads
        const last = text.length - MIN_FRAGMENT_LENGTH
        for (let i = 0; i <= last; i++) {
          if (quads[quadHash(text, i)] === 0) continue
          const anchor = this.#anchors.get(text.slice(i, i + MIN_FRAGMENT_LENGTH))
          if (anchor !== undefined) extend(text, i, anchor, (found ??= []))
        }
      }
    }
    if (this.#short.size > 0) {
      for (const form of this.#short.keys()) {
        for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) {
          if (!isWordChar(text, at - 1) && !isWordChar(text, at + form.length)) (found ??= []).push(at, at + form.length)
        }
      }
    }
    return found === undefined ? NOTHING : merge(found)
  }

  #anchor(key: string): Anchor {
    let anchor = this.#anchors.get(key)
    if (anchor === undefined) {
      anchor = { starts: [], ends: [], longestStart: 0, longestEnd: 0 }
      this.#anchors.set(key, anchor)
      this.#list = [...this.#anchors]
      const hash = quadHash(key, 0)
      this.#quads[hash] = Math.min(255, (this.#quads[hash] ?? 0) + 1)
    }
    return anchor
  }

  #release(key: string, side: 'starts' | 'ends', entry: string): void {
    const anchor = this.#anchors.get(key)
    if (anchor === undefined) return
    const list = anchor[side]
    const at = list.indexOf(entry)
    if (at >= 0) list.splice(at, 1)
    if (anchor.starts.length === 0 && anchor.ends.length === 0) {
      this.#anchors.delete(key)
      this.#list = [...this.#anchors]
      const hash = quadHash(key, 0)
      // A saturated count stays: it only costs lookups that find nothing.
      if (this.#quads[hash] !== 255) this.#quads[hash] = (this.#quads[hash] ?? 1) - 1
    }
  }
}

const NOTHING: readonly number[] = []

/** Up to this many anchors, each is looked for with `indexOf`; beyond, one hashed pass. */
const FEW_ANCHORS = 16

/** Records what `text` holds of `anchor`'s secrets at `at`: the longest run that starts one, and the longest that ends one. */
function extend(text: string, at: number, anchor: Anchor, found: number[]): void {
  if (anchor.starts.length > 0) found.push(at, at + longestShared(anchor.starts, text.slice(at, at + anchor.longestStart)))
  if (anchor.ends.length > 0) {
    const end = at + MIN_FRAGMENT_LENGTH
    found.push(end - longestShared(anchor.ends, reverse(text.slice(Math.max(0, end - anchor.longestEnd), end))), end)
  }
}

/** A 16-bit hash of the 4 characters at `i` (multiplicative: the top bits of their product with a large odd number). */
function quadHash(text: string, i: number): number {
  const word = text.charCodeAt(i) ^ (text.charCodeAt(i + 1) << 7) ^ (text.charCodeAt(i + 2) << 14) ^ (text.charCodeAt(i + 3) << 21)
  return Math.imul(word, 0x9e3779b1) >>> 16
}

interface Anchor {
  /** Forms starting with the anchor, sorted. */
  readonly starts: string[]
  /** Forms ending with the anchor, each reversed, sorted. */
  readonly ends: string[]
  /** Length of the longest form ever added to `starts` / `ends` (a window that long is enough). */
  longestStart: number
  longestEnd: number
}

function insertSorted(list: string[], entry: string): void {
  list.splice(lowerBound(list, entry), 0, entry)
}

/** The first index of `sorted` whose entry is not below `probe`. */
function lowerBound(sorted: readonly string[], probe: string): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if ((sorted[mid] as string) < probe) low = mid + 1
    else high = mid
  }
  return low
}

/**
 * The longest prefix `probe` shares with any entry of `sorted`: it is shared with one of the two
 * entries around where `probe` would be inserted, so two comparisons answer for the whole list.
 */
function longestShared(sorted: readonly string[], probe: string): number {
  const at = lowerBound(sorted, probe)
  return Math.max(sharedPrefix(sorted[at], probe), sharedPrefix(sorted[at - 1], probe))
}

function sharedPrefix(a: string | undefined, b: string): number {
  if (a === undefined) return 0
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/** Reverses UTF-16 code units (the same way for secrets and texts, so surrogate order does not matter). */
function reverse(text: string): string {
  let out = ''
  for (let i = text.length - 1; i >= 0; i--) out += text[i] ?? ''
  return out
}

/**
 * A letter or digit of any script. Made on first use: a regular expression literal is checked when
 * the module is parsed, and Unicode property classes make that check build their character sets,
 * about 3 M instructions that every process importing the SDK would pay (issue 32).
 */
const wordChar = madeOnce(() => new RegExp('[\\p{L}\\p{N}]', 'u'))

function isWordChar(text: string, i: number): boolean {
  return i >= 0 && i < text.length && wordChar().test(text[i] ?? '')
}

/** Sorts `[start, end, ...]` pairs and merges the overlapping ones. */
function merge(flat: number[]): readonly number[] {
  if (flat.length <= 2) return flat
  const pairs: [number, number][] = []
  for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i] as number, flat[i + 1] as number])
  pairs.sort((a, b) => a[0] - b[0] || b[1] - a[1])
  const out: number[] = []
  for (const [start, end] of pairs) {
    const lastEnd = out.length === 0 ? -1 : (out[out.length - 1] as number)
    if (start < lastEnd) out[out.length - 1] = Math.max(lastEnd, end)
    else out.push(start, end)
  }
  return out
}

/** A text in canonical form, and for each of its code units the span of the original it came from (absent: the same text). */
interface Canonical {
  readonly text: string
  readonly start?: Int32Array | undefined
  readonly end?: Int32Array | undefined
}

/** Characters that start something {@link decodeOnce} may decode. */
const ENCODED = /[%+\\&]/

/** `text` with up to {@link MAX_DECODE_PASSES} layers of encoding decoded (see the module comment). */
function canonical(text: string): Canonical {
  if (!ENCODED.test(text)) return { text }
  let current: Canonical = { text }
  for (let pass = 0; pass < MAX_DECODE_PASSES && ENCODED.test(current.text); pass++) {
    const next = decodeOnce(current.text)
    if (next === undefined) break
    const { start: outerStart, end: outerEnd } = current
    if (outerStart !== undefined && outerEnd !== undefined) {
      // Spans of this pass point into the text of the last one: map them on to the original.
      for (let i = 0; i < next.start.length; i++) {
        next.start[i] = outerStart[next.start[i] as number] as number
        next.end[i] = outerEnd[(next.end[i] as number) - 1] as number
      }
    }
    current = next
  }
  return current
}

/**
 * One layer of encoding decoded, with spans; `undefined` when there was nothing to decode. Jumps
 * from one character that may start an escape to the next (a regular expression finds them), so
 * the text between costs a copy, not a call per character. Spans are typed arrays sized to the
 * input: decoding never lengthens a text (an astral character's two code units come from at
 * least 8 characters of input).
 */
function decodeOnce(text: string): { text: string; start: Int32Array; end: Int32Array } | undefined {
  let out = ''
  let start = EMPTY_SPANS
  let end = EMPTY_SPANS
  let length = 0
  /** Where the text not yet copied begins. */
  let copied = 0
  const escapes = new RegExp(ENCODED.source, 'g')
  for (let match = escapes.exec(text); match !== null; match = escapes.exec(text)) {
    const at = match.index
    const next = decodeAt(text, at)
    if (next === 0) continue
    if (start === EMPTY_SPANS) {
      start = new Int32Array(text.length)
      end = new Int32Array(text.length)
    }
    for (let i = copied; i < at; i++, length++) {
      start[length] = i
      end[length] = i + 1
    }
    const units = String.fromCodePoint(decoded)
    out += text.slice(copied, at) + units
    for (let k = 0; k < units.length; k++, length++) {
      start[length] = at
      end[length] = next
    }
    copied = next
    escapes.lastIndex = next
  }
  if (start === EMPTY_SPANS) return undefined
  for (let i = copied; i < text.length; i++, length++) {
    start[length] = i
    end[length] = i + 1
  }
  return { text: out + text.slice(copied), start: start.subarray(0, length), end: end.subarray(0, length) }
}

const EMPTY_SPANS = new Int32Array(0)

/** The code point {@link decodeAt} decoded last. */
let decoded = 0

/**
 * Decodes the escape that starts at `i`, if any: sets {@link decoded} to its code point and
 * returns the index after it; returns 0 when nothing at `i` decodes.
 */
function decodeAt(text: string, i: number): number {
  switch (text.charCodeAt(i)) {
    case 0x2b: // +: a form-encoded space
      decoded = 0x20
      return i + 1
    case 0x25: // %
      return percentAt(text, i)
    case 0x5c: // \
      return backslashAt(text, i)
    case 0x26: // &
      return referenceAt(text, i)
    default:
      return 0
  }
}

/** A percent-encoded byte, or a whole UTF-8 sequence of them. */
function percentAt(text: string, i: number): number {
  const first = byteAt(text, i)
  if (first < 0) return 0
  if (first < 0x80) {
    decoded = first
    return i + 3
  }
  const length = first >= 0xc2 && first <= 0xdf ? 2 : first >= 0xe0 && first <= 0xef ? 3 : first >= 0xf0 && first <= 0xf4 ? 4 : 0
  if (length === 0) return 0
  let point = first & (0xff >> (length + 1))
  for (let k = 1; k < length; k++) {
    const byte = byteAt(text, i + 3 * k)
    if (byte < 0 || (byte & 0xc0) !== 0x80) return 0
    point = (point << 6) | (byte & 0x3f)
  }
  const smallest = length === 2 ? 0x80 : length === 3 ? 0x800 : 0x10000
  if (point < smallest || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return 0
  decoded = point
  return i + 3 * length
}

/** The byte of `%XX` at `i`, or -1. */
function byteAt(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x25) return -1
  return hex(text, i + 1, 2)
}

/** The value of `digits` hex digits at `i`, or -1. */
function hex(text: string, i: number, digits: number): number {
  let value = 0
  for (let k = 0; k < digits; k++) {
    const digit = Number.parseInt(text[i + k] ?? '', 16)
    if (Number.isNaN(digit)) return -1
    value = value * 16 + digit
  }
  return value
}

const SHORT_ESCAPES: Readonly<Record<string, number>> = { '"': 0x22, '\\': 0x5c, '/': 0x2f, "'": 0x27, b: 8, f: 12, n: 10, r: 13, t: 9 }

/** A JSON (or JavaScript) string escape: `\"`, `\\`, `\/`, `\n`, `\uXXXX`, `\xHH`. */
function backslashAt(text: string, i: number): number {
  const letter = text[i + 1] ?? ''
  const short = SHORT_ESCAPES[letter]
  if (short !== undefined) {
    decoded = short
    return i + 2
  }
  const digits = letter === 'u' ? 4 : letter === 'x' ? 2 : 0
  const value = digits === 0 ? -1 : hex(text, i + 2, digits)
  if (value < 0) return 0
  decoded = value
  return i + 2 + digits
}

const REFERENCE = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/y
const NAMED: Readonly<Record<string, number>> = { amp: 0x26, lt: 0x3c, gt: 0x3e, quot: 0x22, apos: 0x27 }

/** An HTML character reference: `&quot;`, `&#34;`, `&#x22;` (and `&amp;`, `&lt;`, `&gt;`, `&apos;`). */
function referenceAt(text: string, i: number): number {
  REFERENCE.lastIndex = i
  const match = REFERENCE.exec(text)
  if (match === null) return 0
  const [whole, decimal, hexadecimal, name] = match
  const point =
    decimal !== undefined ? Number(decimal) : hexadecimal !== undefined ? Number.parseInt(hexadecimal, 16) : (NAMED[name ?? ''] ?? 0)
  if (point === 0 || point > 0x10ffff) return 0
  decoded = point
  return i + whole.length
}

/**
 * The values of the members named `fields` in a text that is not JSON (a body cut short), read
 * loosely: `"token": "…"`, `'token': '…'`, `token=…`. A value cut by the end of the text counts
 * when it is at least {@link MIN_FRAGMENT_LENGTH} characters long.
 */
function valuesInText(text: string, fields: readonly string[]): string[] {
  const values: string[] = []
  for (const field of fields) {
    const name = field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    const member = new RegExp(`(["']?)${name}\\1\\s*[:=]\\s*(?:"([^"]*)(")?|'([^']*)(')?|([^\\s"',;&}\\]]+))`, 'g')
    for (const match of text.matchAll(member)) {
      const [whole, , double, doubleEnd, single, singleEnd, bare] = match
      const value = double ?? single ?? bare ?? ''
      const complete =
        doubleEnd !== undefined || singleEnd !== undefined || (bare !== undefined && match.index + whole.length < text.length)
      if (value.length > 0 && (complete || value.length >= MIN_FRAGMENT_LENGTH)) values.push(value)
    }
  }
  return values
}

/** Calls `remember` with every string inside the members named `fields`, at any depth up to `MAX_RESPONSE_DEPTH`. */
function rememberIn(value: unknown, fields: readonly string[], depth: number, remember: (secret: string) => void): void {
  if (value === null || typeof value !== 'object' || depth >= MAX_RESPONSE_DEPTH) return
  for (const [key, item] of Object.entries(value)) {
    if (fields.includes(key)) rememberStrings(item, depth + 1, remember)
    else rememberIn(item, fields, depth + 1, remember)
  }
}

function rememberStrings(value: unknown, depth: number, remember: (secret: string) => void): void {
  if (typeof value === 'string') remember(value)
  else if (value !== null && typeof value === 'object' && depth < MAX_RESPONSE_DEPTH) {
    for (const item of Object.values(value)) rememberStrings(item, depth + 1, remember)
  }
}

/** What {@link scrub} shows for a value that contains itself. */
const CIRCULAR = '[Circular]'

/**
 * A copy of `value` with every string scrubbed and anything deeper than `MAX_RESPONSE_DEPTH` levels
 * replaced by {@link TOO_DEEP}; `value` itself when nothing changed (checked before copying, so
 * the common case, nothing to scrub, allocates nothing). `done` maps each object already walked
 * to what it became, so an object met twice is scrubbed the same both times.
 */
function scrub(value: unknown, redact: (s: string) => string, done: Map<object, unknown>, depth: number): unknown {
  if (typeof value === 'string') return redact(value)
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value
  if (done.has(value)) return done.get(value)
  if (depth >= MAX_RESPONSE_DEPTH) return TOO_DEEP
  done.set(value, CIRCULAR)
  let result: unknown
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      const next = scrub(item, redact, done, depth + 1)
      if (next !== item) out ??= value.slice(0, i)
      out?.push(next)
    }
    result = out ?? value
  } else {
    const entries = Object.entries(value)
    let out: Record<string, unknown> | undefined
    for (let i = 0; i < entries.length; i++) {
      const [key, item] = entries[i] as [string, unknown]
      const nextKey = redact(key)
      const next = scrub(item, redact, done, depth + 1)
      if (out === undefined && (nextKey !== key || next !== item)) {
        out = {}
        for (const [earlierKey, earlier] of entries.slice(0, i)) define(out, earlierKey, earlier)
      }
      if (out !== undefined) define(out, nextKey, next)
    }
    result = out ?? value
  }
  done.set(value, result)
  return result
}

/** `out[key] = value` as a plain own property: a `__proto__` key stays data. */
function define(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
}
