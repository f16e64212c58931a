/**
 * The checkpoint of `listNew`: per conversation, how far its messages were read. Plain JSON,
 * versioned, independent of page size, and compact (about 60–80 bytes per conversation: a million
 * conversations fit in under 100 MB; see BENCHMARKS.md for the measured size and JSON times).
 */
import type { ValidationIssue } from '../errors/errors.ts'

/**
 * How far one conversation's messages were read: `[read, lastMessageId, updatedAt]`.
 * - `read`: messages read, from the conversation's first (the next run reads from message `read`);
 * - `lastMessageId`: the id of message `read - 1`, checked before reading on (`null` when `read` is 0);
 * - `updatedAt`: the conversation's `updated_at` when it was read.
 */
export type ConversationCheckpoint = [read: number, lastMessageId: string | null, updatedAt: string]

/**
 * Where `listNew` got to, to pass to the next `listNew` as `checkpoint` (spec, Endpoints 5 and 6).
 * A plain JSON-serialisable object: store it with `JSON.stringify`, read it back with
 * `JSON.parse`. Checkpoints of several shards merge when passed together as an array.
 */
export type MessagesCheckpoint = {
  /** Format version: 1. A checkpoint of another version is refused (RequestValidationError). */
  version: 1
  /** Per conversation id, how far its messages were read (see {@link ConversationCheckpoint}). */
  conversations: Record<string, ConversationCheckpoint>
}

/** The checkpoint format this SDK writes and reads. */
export const CHECKPOINT_VERSION = 1

const MAX_REPORTED = 10

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** Why one entry is malformed, or `undefined` when it is well-formed. */
function entryProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length !== 3) return 'Expected [read, lastMessageId, updatedAt]'
  const [read, lastId, updatedAt] = value as unknown[]
  if (typeof read !== 'number' || !Number.isSafeInteger(read) || read < 0)
    return 'Expected read (the first member) to be a whole number >= 0'
  if (read === 0 ? lastId !== null : typeof lastId !== 'string' || lastId === '') {
    return read === 0 ? 'Expected lastMessageId null when read is 0' : 'Expected lastMessageId to be a non-empty string when read > 0'
  }
  if (typeof updatedAt !== 'string') return 'Expected updatedAt (the third member) to be a string'
  return undefined
}

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
  list.forEach((checkpoint, n) => {
    const where = Array.isArray(input) ? [n] : []
    if (!isRecord(checkpoint) || checkpoint['version'] !== CHECKPOINT_VERSION || !isRecord(checkpoint['conversations'])) {
      report(
        where,
        `Expected a checkpoint returned by checkpoint() of listNew (an object with version ${CHECKPOINT_VERSION} and conversations)`,
      )
      return
    }
    const conversations = checkpoint['conversations']
    for (const id of Object.keys(conversations)) {
      const problem = id === '' ? 'Expected a conversation id' : entryProblem(conversations[id])
      if (problem !== undefined) report([...where, 'conversations', id], problem)
    }
  })
  if (extra > 0) issues.push({ path: [], code: 'custom', message: `and ${extra} more malformed entries` })
  return issues
}

/**
 * One checkpoint or an array of them (one per shard; checked by {@link checkpointIssues}) as one
 * map, merged per conversation: the entry that read further wins (then the later `updatedAt`).
 * Entries for which `keep` answers false (conversations of another shard) are left out.
 */
export function mergeCheckpoints(
  input: MessagesCheckpoint | readonly MessagesCheckpoint[],
  keep: (conversationId: string) => boolean,
): Map<string, ConversationCheckpoint> {
  const merged = new Map<string, ConversationCheckpoint>()
  const list: readonly MessagesCheckpoint[] = Array.isArray(input) ? input : [input as MessagesCheckpoint]
  for (const checkpoint of list) {
    const conversations = checkpoint.conversations
    for (const id of Object.keys(conversations)) {
      if (!keep(id)) continue
      const next = conversations[id] as ConversationCheckpoint
      const known = merged.get(id)
      if (known === undefined || next[0] > known[0] || (next[0] === known[0] && next[2] > known[2])) {
        merged.set(id, [next[0], next[1], next[2]])
      }
    }
  }
  return merged
}
