// The checkpoint of `listNew`: per conversation, how far its messages were read. Plain JSON,
// versioned, independent of page size.
//
// Written in columns (one array per field, the same index for one conversation), not as an object
// keyed by conversation id: a million-key object is what makes `JSON.parse` and `JSON.stringify`
// slow (V8 builds it as a hash table, key by key), while arrays of strings and numbers parse about
// three times faster for the same bytes. About 40 bytes per conversation plus the lengths of its id
// and of its last message's id (BENCHMARKS.md has the measured size and JSON times per million).
// The first format (an object keyed by id, `version: 1`) is still read.
import type { ValidationIssue } from '../errors/errors.ts'

/**
 * Where `listNew` got to, to pass to the next `listNew` as `checkpoint` (spec, Endpoints 5 and 6).
 * A plain JSON-serialisable object: store it with `JSON.stringify`, read it back with
 * `JSON.parse`. Checkpoints of several shards merge when passed together as an array.
 *
 * The four arrays are parallel: index `i` describes conversation `conversations[i]`, whose messages
 * were read up to message `read[i]` (exclusive, counted from its first), the last of which has the
 * id `lastMessageIds[i]` (`null` when `read[i]` is 0), when its `updated_at` was `updatedAt[i]`.
 * In a compact checkpoint (`checkpoint({ compact: true })`) a last message's id is kept as a
 * 53-bit fingerprint of it instead, a whole number.
 */
export type MessagesCheckpoint = {
  /** Format version: 2. Version 1 (an object keyed by conversation id) is read too; any other is refused (RequestValidationError). */
  version: 2
  /**
   * The service and API key the checkpoint was made with: the client's API root (`baseUrl`, its
   * origin and path through `/rest/v1`) and `keyId`, never the secret. `listNew` refuses a
   * checkpoint of another service or key with RequestValidationError (its positions describe
   * another company's conversations). Absent in checkpoints made by 0.3: those are taken as the
   * client's own, with a warning (and the checkpoint the run returns records it). To carry a
   * checkpoint over to a new key of the same company (key rotation), delete this member.
   * `baseUrl` is the API root requests went to (origin and path through `/rest/v1`, e.g.
   * `https://chat.example.com/rest/v1`); `keyId` the API key id.
   */
  service?: { baseUrl: string; keyId: string } | undefined
  /** Conversation ids. */
  conversations: string[]
  /** Messages read of each conversation, from its first (the next run reads from message `read`). */
  read: number[]
  /**
   * The id of message `read - 1` of each conversation, checked before reading on; `null` when `read`
   * is 0. A number is a 53-bit fingerprint of the id (a compact checkpoint).
   */
  lastMessageIds: (string | number | null)[]
  /** Each conversation's `updated_at` when it was read. */
  updatedAt: string[]
}

/** The service and key a {@link MessagesCheckpoint} was made with (its `service`, spelled out there for users). */
export type CheckpointService = {
  /** The API root requests went to: origin and path through `/rest/v1`, e.g. `https://chat.example.com/rest/v1`. */
  baseUrl: string
  /** The API key id (never the secret). */
  keyId: string
}

/**
 * How far one conversation's messages were read, as `listNew` holds it:
 * `[read, lastMessageId, updatedAt]` (one index of the columns of {@link MessagesCheckpoint}).
 * @internal
 */
export type ConversationCheckpoint = readonly [read: number, lastMessageId: string | number | null, updatedAt: string]

/** The checkpoint format this SDK writes. */
export const CHECKPOINT_VERSION = 2

/** The first format (0.3 pre-releases), still read: `{ version: 1, conversations: { [id]: [read, lastMessageId, updatedAt] } }`. */
const FIRST_VERSION = 1

const MAX_REPORTED = 10

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** Why one entry is malformed, or `undefined` when it is well-formed. */
function entryProblem(read: unknown, lastId: unknown, updatedAt: unknown): string | undefined {
  if (typeof read !== 'number' || !Number.isSafeInteger(read) || read < 0) return 'Expected read to be a whole number >= 0'
  if (read === 0 ? lastId !== null : !isMessageIdOrFingerprint(lastId)) {
    return read === 0
      ? 'Expected lastMessageId null when read is 0'
      : 'Expected lastMessageId to be a non-empty string (or its fingerprint, a whole number from 0 to 2^53 - 1) when read > 0'
  }
  if (typeof updatedAt !== 'string') return 'Expected updatedAt to be a string'
  return undefined
}

function isMessageIdOrFingerprint(value: unknown): boolean {
  return typeof value === 'string' ? value !== '' : typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/**
 * A 53-bit fingerprint of a message id (0 to 2^53 - 1): what a compact checkpoint keeps instead of
 * the id of the last message read, to check that it is still where it was. Two lanes of 32-bit
 * FNV-1a over the id's UTF-16 code units, each mixed (a murmur3-style finaliser), 21 bits of one
 * and 32 of the other: two different ids share a fingerprint about once in 9 × 10^15 checks, far
 * less often than a disk flips a bit. Stable within a major version (checkpoints keep it).
 * @internal
 */
export function messageIdFingerprint(id: string): number {
  let a = 0x811c9dc5
  let b = 0x9e3779b9 ^ id.length
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x01000193)
    b = Math.imul(b ^ unit, 0x5bd1e995)
    b ^= b >>> 15
  }
  return (mix(b) >>> 11) * 0x1_0000_0000 + mix(a)
}

/** A 32-bit finaliser: every input bit moves about half the output bits. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** Whether `id` is the message a checkpoint remembers as `remembered` (an id, or its fingerprint). @internal */
export function isRememberedMessage(id: string, remembered: string | number): boolean {
  return typeof remembered === 'string' ? id === remembered : messageIdFingerprint(id) === remembered
}

/** The columns a checkpoint must have, each an array as long as `conversations`. */
const COLUMNS = ['conversations', 'read', 'lastMessageIds', 'updatedAt'] as const

/**
 * The problems of a `checkpoint` parameter (one checkpoint, or an array of them): paths relative
 * to it, at most the first 10 plus a count. None means {@link mergeCheckpoints} may read it.
 */
export function checkpointIssues(input: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  let extra = 0
  const report = (path: (string | number)[], message: string): void => {
    if (issues.length < MAX_REPORTED) issues.push({ path, code: 'custom', message })
    else extra++
  }
  const list: readonly unknown[] = Array.isArray(input) ? input : [input]
  if (list.length === 0) {
    report([], 'Expected at least one checkpoint (for a first run, pass no checkpoint at all)')
  }
  // An index loop, not forEach: a hole in the array (a shard whose file was missing) is reported.
  for (let n = 0; n < list.length; n++) {
    const checkpoint = list[n]
    const where = Array.isArray(input) ? [n] : []
    if (isRecord(checkpoint) && checkpoint['version'] === FIRST_VERSION && isRecord(checkpoint['conversations'])) {
      firstVersionIssues(checkpoint['conversations'], where, report)
      continue
    }
    if (!isRecord(checkpoint) || checkpoint['version'] !== CHECKPOINT_VERSION) {
      report(where, `Expected a checkpoint returned by checkpoint() of listNew (an object with version ${CHECKPOINT_VERSION})`)
      continue
    }
    const service = checkpoint['service']
    if (
      service !== undefined &&
      !(
        isRecord(service) &&
        typeof service['baseUrl'] === 'string' &&
        typeof service['keyId'] === 'string' &&
        Object.keys(service).length === 2
      )
    ) {
      report([...where, 'service'], 'Expected { baseUrl, keyId } (two strings): the service and key the checkpoint was made with')
    }
    const ids = checkpoint['conversations']
    if (!Array.isArray(ids)) {
      report([...where, 'conversations'], 'Expected an array of conversation ids')
      continue
    }
    let columnsOk = true
    for (const column of COLUMNS) {
      const values = checkpoint[column]
      if (!Array.isArray(values) || values.length !== ids.length) {
        report([...where, column], `Expected an array of ${ids.length} values, one per conversation`)
        columnsOk = false
      }
    }
    if (!columnsOk) continue
    const read = checkpoint['read'] as unknown[]
    const lastIds = checkpoint['lastMessageIds'] as unknown[]
    const updatedAt = checkpoint['updatedAt'] as unknown[]
    for (let i = 0; i < ids.length; i++) {
      const id: unknown = ids[i]
      const problem =
        typeof id !== 'string' || id === ''
          ? 'Expected a conversation id (a non-empty string)'
          : entryProblem(read[i], lastIds[i], updatedAt[i])
      if (problem !== undefined) report([...where, 'conversations', i], problem)
    }
  }
  if (extra > 0) issues.push({ path: [], code: 'custom', message: `and ${extra} more malformed entries` })
  return issues
}

/** The problems of a first-format checkpoint's `conversations` object. */
function firstVersionIssues(
  conversations: Record<string, unknown>,
  where: (string | number)[],
  report: (path: (string | number)[], message: string) => void,
): void {
  // for…in, not Object.keys(): no array of every id to build; inherited keys are not entries.
  for (const id in conversations) {
    if (!Object.hasOwn(conversations, id)) continue
    const entry = conversations[id]
    const problem =
      id === ''
        ? 'Expected a conversation id'
        : Array.isArray(entry) && entry.length === 3
          ? entryProblem(entry[0], entry[1], entry[2])
          : 'Expected [read, lastMessageId, updatedAt]'
    if (problem !== undefined) report([...where, 'conversations', id], problem)
  }
}

/** Sets `entry` for `id` unless `merged` has one that read further (then the later `updatedAt` wins). */
function mergeEntry(merged: Map<string, ConversationCheckpoint>, id: string, entry: ConversationCheckpoint): void {
  const known = merged.get(id)
  if (known === undefined || entry[0] > known[0] || (entry[0] === known[0] && entry[2] > known[2])) merged.set(id, entry)
}

/**
 * One checkpoint or an array of them (one per shard; checked by {@link checkpointIssues}) as one
 * map, merged per conversation: the entry that read further wins (then the later `updatedAt`).
 * Entries for which `keep` answers false (conversations of another shard) are left out.
 */
export function mergeCheckpoints(
  input: MessagesCheckpoint | readonly MessagesCheckpoint[],
  keep: ((conversationId: string) => boolean) | undefined,
): Map<string, ConversationCheckpoint> {
  const merged = new Map<string, ConversationCheckpoint>()
  const list: readonly MessagesCheckpoint[] = Array.isArray(input) ? input : [input as MessagesCheckpoint]
  for (const checkpoint of list) {
    if ((checkpoint.version as number) === FIRST_VERSION) {
      const conversations = (checkpoint as unknown as { conversations: Record<string, ConversationCheckpoint> }).conversations
      for (const id in conversations) {
        if (!Object.hasOwn(conversations, id) || (keep !== undefined && !keep(id))) continue
        const entry = conversations[id] as ConversationCheckpoint
        // A copy: the run's checkpoint must not follow later changes to the caller's object.
        mergeEntry(merged, id, [entry[0], entry[1], entry[2]])
      }
      continue
    }
    const { conversations: ids, read, lastMessageIds, updatedAt } = checkpoint
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string
      if (keep === undefined || keep(id)) mergeEntry(merged, id, [read[i] as number, lastMessageIds[i] ?? null, updatedAt[i] as string])
    }
  }
  return merged
}

/**
 * Whose a checkpoint (one, or an array; checked by {@link checkpointIssues}) is, against `service`,
 * the client's: `issues` for each checkpoint made with another service or key (paths relative to
 * the parameter), and how many carry no identity (made by 0.3).
 */
export function identityIssues(
  input: MessagesCheckpoint | readonly MessagesCheckpoint[],
  service: CheckpointService,
): { issues: ValidationIssue[]; anonymous: number } {
  const list: readonly MessagesCheckpoint[] = Array.isArray(input) ? input : [input as MessagesCheckpoint]
  const issues: ValidationIssue[] = []
  let anonymous = 0
  list.forEach((checkpoint, n) => {
    const made = (checkpoint as { service?: CheckpointService }).service
    if (made === undefined) {
      anonymous++
      return
    }
    if (made.baseUrl === service.baseUrl && made.keyId === service.keyId) return
    const other = made.baseUrl === service.baseUrl ? `key ${made.keyId}, not ${service.keyId}` : `${made.baseUrl}, not ${service.baseUrl}`
    issues.push({
      path: [...(Array.isArray(input) ? [n] : []), 'service'],
      code: 'custom',
      message:
        `This checkpoint was made with ${other}: its positions describe another service's or company's conversations, so it cannot resume this one. ` +
        'Use it with the client it was made with, or start this one without a checkpoint (after a key rotation within one company, delete its service member)',
    })
  })
  return { issues, anonymous }
}

/**
 * The checkpoint of `entries`, in columns, made with `service`; `compact`: each last message's id
 * as its {@link messageIdFingerprint} (about 25 bytes less per conversation with UUID-length ids).
 */
export function toCheckpoint(
  entries: ReadonlyMap<string, ConversationCheckpoint>,
  service: CheckpointService,
  compact = false,
): MessagesCheckpoint {
  const size = entries.size
  const conversations = new Array<string>(size)
  const read = new Array<number>(size)
  const lastMessageIds = new Array<string | number | null>(size)
  const updatedAt = new Array<string>(size)
  let i = 0
  for (const [id, entry] of entries) {
    conversations[i] = id
    read[i] = entry[0]
    const lastId = entry[1]
    lastMessageIds[i] = compact && typeof lastId === 'string' ? messageIdFingerprint(lastId) : lastId
    updatedAt[i] = entry[2]
    i++
  }
  return {
    version: CHECKPOINT_VERSION,
    service: { baseUrl: service.baseUrl, keyId: service.keyId },
    conversations,
    read,
    lastMessageIds,
    updatedAt,
  }
}
