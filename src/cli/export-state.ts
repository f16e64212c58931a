/**
 * The export's state files, read and checked before anything is changed: `OUT.cursor` (a full
 * export under way) and the checkpoint file of `--checkpoint` (and the previous night's ones of
 * `--previous-checkpoint`). Each records the shard and the service it belongs to (base URL and
 * key id, never the secret); a file of another shard, another service or another company (key) is
 * refused with a {@link StateError} that says which, and how to go on.
 *
 * @module
 */
import type { MessagesCheckpoint, resources } from 'chat-service-sdk'
import { onFile, readIfExists } from './files.ts'

/** `I/N`, as the shard is written in state files and messages; `null` for a whole export. */
export type ShardText = string | null

/** The service and company a state file belongs to: the client's `baseUrl` and `keyId`. */
export interface ServiceIdentity {
  readonly baseUrl: string
  readonly keyId: string
}

/** `OUT.cursor`: where a full export stands. */
export interface CursorState {
  readonly version: 1
  readonly cursor: string
  /** Bytes of OUT written before `cursor` (every line up to the last message written). */
  readonly bytes: number
  /** The fingerprint of the line that ends at `bytes` (tail.ts); absent in states written before 0.4 and before a run's first line. */
  readonly tail?: string | undefined
  /** Messages written before `cursor`, across resumes. */
  readonly done: number
  readonly shard: ShardText
  readonly service: ServiceIdentity
}

/** An unfinished `--checkpoint` run: where it writes, and how far. */
export interface RunState {
  /** The absolute path of the output it appends to. */
  readonly out: string
  /** Bytes of `out` up to the last line the checkpoint counts. */
  readonly bytes: number
  /** The fingerprint of the line that ends at `bytes` (tail.ts); absent before the run's first line, and in states written before 0.4. */
  readonly tail?: string | undefined
  /** Messages it has written. */
  readonly written: number
}

/** The checkpoint file: the nightly export's state. */
export interface CheckpointState {
  readonly version: 1
  readonly shard: ShardText
  readonly service: ServiceIdentity
  readonly checkpoint: MessagesCheckpoint
  /** The run that has not finished, if one has not. */
  readonly run: RunState | null
  /** The last run that finished. */
  readonly last: {
    readonly finishedAt: string
    /** Its output's path, or `stdout`. */
    readonly out: string
    readonly written: number
    readonly summary: resources.ListNewSummary | null
  } | null
}

/** A state file that this command did not write, or that does not fit this command line or service: exit status 1, nothing changed. */
export class StateError extends Error {
  override readonly name = 'StateError'
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

const shardName = (shard: ShardText, whole: string): string => (shard === null ? whole : `shard ${shard}`)

async function readJson(path: string, role: string, what: string): Promise<Record<string, unknown> | undefined> {
  const text = await onFile('read', path, role, () => readIfExists(path))
  if (text === undefined) return undefined
  try {
    const value: unknown = JSON.parse(text)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // reported below
  }
  throw new StateError(`${path} is not ${what}`)
}

/** The recorded service, `undefined` for a file of chat-service 0.3 (which recorded none), `false` when malformed. */
function recordedService(value: unknown): ServiceIdentity | undefined | false {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object') return false
  const { baseUrl, keyId } = value as Partial<Record<keyof ServiceIdentity, unknown>>
  return typeof baseUrl === 'string' && typeof keyId === 'string' ? { baseUrl, keyId } : false
}

/** How the state files are checked against this run: its service, and where its settings came from (for messages). */
export interface StateCheck {
  readonly service: ServiceIdentity
  /** Lines saying where the base URL and key id of this run came from. */
  readonly settings: () => string
  /** Tells the user something on stderr. */
  readonly note: (text: string) => void
}

/**
 * Refuses a state file of another service or company: exit 1, with both services and where this
 * run's settings came from. A file that names none (chat-service 0.3) is taken as this service's.
 */
function checkService(path: string, recorded: ServiceIdentity | undefined, check: StateCheck, advice: string): ServiceIdentity {
  const { service } = check
  if (recorded === undefined) {
    check.note(`${path} names no service (written by chat-service 0.3): taken as ${service.baseUrl}'s, key ${service.keyId}`)
    return service
  }
  if (recorded.baseUrl === service.baseUrl && recorded.keyId === service.keyId) return recorded
  const what =
    recorded.baseUrl === service.baseUrl
      ? `was written with the key ${recorded.keyId} (another company, or the same one under an older key), and this run uses the key ${service.keyId}`
      : `belongs to the service ${recorded.baseUrl} (key ${recorded.keyId}), and this run talks to ${service.baseUrl} (key ${service.keyId})`
  const rotation =
    recorded.baseUrl === service.baseUrl
      ? `. If it is the same company under a new key, replace the key id ${recorded.keyId} with ${service.keyId} wherever ${path} holds it`
      : ''
  throw new StateError(`${path} ${what}: ${advice}${rotation}\n${check.settings()}`)
}

/** Reads `OUT.cursor`: `undefined` when there is none. @throws StateError when it is not one, or is another shard's or service's */
export async function readCursorState(path: string, shard: ShardText, check: StateCheck): Promise<CursorState | undefined> {
  const what = 'a cursor file of chat-service export; delete it to start a new export'
  const state = await readJson(path, 'the cursor file of the export', what)
  if (state === undefined) return undefined
  const service = recordedService(state['service'])
  if (
    state['version'] !== 1 ||
    typeof state['cursor'] !== 'string' ||
    !isCount(state['bytes']) ||
    !isCount(state['done']) ||
    (state['tail'] !== undefined && typeof state['tail'] !== 'string') ||
    service === false
  ) {
    throw new StateError(`${path} is not ${what}`)
  }
  const checked = checkService(
    path,
    service,
    check,
    `run it with that service's settings to finish that export, or delete ${path} to start a new one`,
  )
  const saved = (state['shard'] as ShardText | undefined) ?? null
  if (saved !== shard) {
    throw new StateError(
      `${path} is an unfinished export of ${shardName(saved, 'all shards')}, not ${shardName(shard, 'all shards')}: ` +
        `finish it with ${saved === null ? 'no --shard' : `--shard ${saved}`}, or delete ${path} to start a new export`,
    )
  }
  const tail = typeof state['tail'] === 'string' ? { tail: state['tail'] } : {}
  return { version: 1, cursor: state['cursor'], bytes: state['bytes'], ...tail, done: state['done'], shard: saved, service: checked }
}

/** Reads a checkpoint file without judging its shard: `undefined` when there is none. @throws StateError */
async function readCheckpointFile(path: string, role: string, check: StateCheck, advice: string): Promise<CheckpointState | undefined> {
  const what = 'a checkpoint file of chat-service export --checkpoint'
  const state = await readJson(path, role, what)
  if (state === undefined) return undefined
  const run = state['run'] as Partial<RunState> | null | undefined
  const checkpoint = state['checkpoint']
  const service = recordedService(state['service'])
  if (
    state['version'] !== 1 ||
    checkpoint === null ||
    typeof checkpoint !== 'object' ||
    service === false ||
    (run != null &&
      (typeof run.out !== 'string' ||
        !isCount(run.bytes) ||
        !isCount(run.written) ||
        (run.tail !== undefined && typeof run.tail !== 'string')))
  ) {
    throw new StateError(`${path} is not ${what}`)
  }
  return {
    version: 1,
    shard: (state['shard'] as ShardText | undefined) ?? null,
    service: checkService(path, service, check, advice),
    checkpoint: checkpoint as MessagesCheckpoint,
    run: (run as RunState | null | undefined) ?? null,
    last: (state['last'] as CheckpointState['last']) ?? null,
  }
}

/** Reads the checkpoint file of `--checkpoint`: `undefined` on a first run. @throws StateError for another shard's or service's */
export async function readCheckpointState(path: string, shard: ShardText, check: StateCheck): Promise<CheckpointState | undefined> {
  const state = await readCheckpointFile(path, 'the checkpoint file', check, 'give each service (and company) its own checkpoint file')
  if (state === undefined || state.shard === shard) return state
  const sameCount = state.shard !== null && shard !== null && state.shard.split('/')[1] === shard.split('/')[1]
  throw new StateError(
    `${path} holds the checkpoint of ${shardName(state.shard, 'a whole export')}, and this run is ${shardName(shard, 'a whole export')}: ` +
      (sameCount
        ? 'keep the same --shard from run to run, each shard with its own checkpoint file'
        : 'to change the number of shards, give each shard of the new count a new --checkpoint file, and the previous ' +
          "run's checkpoint files (every shard's) with --previous-checkpoint FILE, once for each"),
  )
}

/**
 * The previous night's checkpoints (`--previous-checkpoint`, one file per shard of its count, or
 * one of a whole export), for a first run under a new shard count: finished, of this service, and
 * covering every shard of their count once, so that no conversation is read again from its start.
 * @throws StateError saying which file is missing, unfinished or foreign
 */
export async function readPreviousCheckpoints(paths: readonly string[], check: StateCheck): Promise<MessagesCheckpoint[]> {
  const states: { path: string; state: CheckpointState }[] = []
  for (const path of paths) {
    const state = await readCheckpointFile(path, 'a previous checkpoint file', check, 'give the previous checkpoint files of this service')
    if (state === undefined) throw new StateError(`--previous-checkpoint ${path}: there is no such file`)
    if (state.run !== null) {
      throw new StateError(
        `--previous-checkpoint ${path} holds an unfinished run of ${shardName(state.shard, 'a whole export')} (writing to ${state.run.out}): ` +
          `finish it first with the command that started it (${state.shard === null ? 'no --shard' : `--shard ${state.shard}`}, --checkpoint ${path}), then start the new shard count`,
      )
    }
    states.push({ path, state })
  }
  const whole = states.filter(({ state }) => state.shard === null)
  if (whole.length > 0) {
    if (states.length > 1) {
      throw new StateError(
        `--previous-checkpoint: ${whole[0]?.path ?? ''} is the checkpoint of a whole export, which covers every conversation: give it alone`,
      )
    }
    return [whole[0]?.state.checkpoint as MessagesCheckpoint]
  }
  const counts = new Set(states.map(({ state }) => (state.shard ?? '').split('/')[1]))
  if (counts.size > 1) {
    throw new StateError(
      `--previous-checkpoint: the files are of different shard counts (${[...counts].map((n) => `of ${n}`).join(', ')}): give the files of one run, every shard of it`,
    )
  }
  const count = Number([...counts][0])
  const byIndex = new Map<number, string>()
  for (const { path, state } of states) {
    const index = Number((state.shard ?? '').split('/')[0])
    const other = byIndex.get(index)
    if (other !== undefined) throw new StateError(`--previous-checkpoint: ${other} and ${path} are both shard ${index}/${count}`)
    byIndex.set(index, path)
  }
  const missing = Array.from({ length: count }, (_, index) => index).filter((index) => !byIndex.has(index))
  if (missing.length > 0) {
    throw new StateError(
      `--previous-checkpoint: the files hold ${byIndex.size} of the ${count} shards; ${missing.map((index) => `${index}/${count}`).join(', ')} ` +
        `${missing.length === 1 ? 'is' : 'are'} missing (its conversations would be exported again from their first message): give every shard's checkpoint file`,
    )
  }
  return states.map(({ state }) => state.checkpoint)
}
