// examples/distributed-export/shard-job.ts, in process and step by step: an attempt that lost its
// job while a page was in flight (its worker cut off from Redis, or paused past lockDuration) must
// write nothing once the page comes, since another attempt has cut the file back and written those
// lines already. This is the interleaving behind a duplicate line once seen in aof.test.ts: Redis
// down while a page was held, another worker took the job, then the held page came back. The job
// is a stand-in that keeps its data and lock the way BullMQ does (`extendLock` answers 0 once the
// lock is another's; `updateData` checks nothing), so the order of events is the test's, not the
// timers'.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Job } from 'bullmq'
import { Agent, type Dispatcher } from 'undici'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import type { ShardJobData, ShardResult } from '../../../examples/distributed-export/config.ts'
import { COMPANY, referenceExport } from './kit.ts'

// A save after every line, one page in flight at a time: config.ts reads these when it is imported
// (afresh here: another file of this vitest worker may have imported it with other settings).
vi.stubEnv('EXPORT_SAVE_EVERY_MS', '0')
vi.stubEnv('EXPORT_CONCURRENCY', '1')
vi.resetModules()
const { exportShard, LockLostError } = await import('../../../examples/distributed-export/shard-job.ts')

/** The job as Redis holds it: its data, and which attempt's token holds its lock. */
interface Stored {
  data: ShardJobData
  lockedBy: string
}

/** What an attempt sees of the job: BullMQ's `Job`, as far as a shard job uses it. */
function jobFor(stored: Stored, saves: string[]): Job<ShardJobData, ShardResult> {
  const job = {
    id: 'night-n1-shard-0-of-1',
    attemptsStarted: 1,
    data: stored.data,
    extendLock: (token: string): Promise<number> => Promise.resolve(stored.lockedBy === token ? 1 : 0),
    updateData: (data: ShardJobData): Promise<void> => {
      // As BullMQ's updateData: no lock check.
      stored.data = data
      job.data = data
      saves.push(`${data.saved?.written ?? 0}`)
      return Promise.resolve()
    },
  }
  return job as unknown as Job<ShardJobData, ShardResult>
}

/** A dispatcher that holds the requests of `path` until opened: the worker's page in flight, not coming back. */
function holding(path: string): { dispatcher: Dispatcher; open: () => void; agent: Agent } {
  let release: () => void = () => undefined
  const opened = new Promise<void>((resolve) => (release = resolve))
  const agent = new Agent()
  const dispatcher = agent.compose((dispatch) => (options, handler) => {
    if (!options.path.startsWith(path)) return dispatch(options, handler)
    void opened.then(() => dispatch(options, handler))
    return true
  })
  return {
    dispatcher,
    open: () => {
      release()
    },
    agent,
  }
}

const dirs: string[] = []
afterAll(async () => {
  vi.unstubAllEnvs()
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

describe('examples/distributed-export: a shard attempt that lost its job', () => {
  it('writes nothing once its held page comes back after another attempt cut the file back and finished the shard', async () => {
    const fake = createFakeChatService({ seed: generateDataset({ seed: 41, conversations: 12, messages: 240 }) })
    const server = await fake.listen()
    const dir = await mkdtemp(join(tmpdir(), 'stalled-writer-'))
    dirs.push(dir)
    const reference = await referenceExport(server)
    const out = join(dir, 'n1-shard-0-of-1.jsonl')
    const stored: Stored = { data: { night: 'n1', shard: { index: 0, count: 1 }, out, since: null, saved: null }, lockedBy: 'attempt-1' }
    const log: string[] = []

    // Attempt 1 writes and saves the messages of the conversations before the held one, then waits
    // for the held one's page: its worker is cut off from Redis (or paused), its lock expires.
    const conversations = fake.listConversations(COMPANY)
    const heldId = conversations[Math.floor(conversations.length / 2)]!.id
    const before = reference.findIndex((line) => (JSON.parse(line) as { conversation_id: string }).conversation_id === heldId)
    expect(before).toBeGreaterThan(0)
    const held = holding(`/rest/v1/conversations/${heldId}/messages`)
    const first = new ChatServiceClient({ ...server.clientOptions(), dispatcher: held.dispatcher })
    const firstSaves: string[] = []
    const firstJob = jobFor(stored, firstSaves)
    let reached: () => void = () => undefined
    const waiting = new Promise<void>((resolve) => (reached = resolve))
    const update = firstJob.updateData.bind(firstJob)
    firstJob.updateData = async (data) => {
      await update(data)
      if (data.saved?.written === before) reached()
    }
    const firstEnded = exportShard(first, firstJob, 'attempt-1', undefined, (line) => log.push(`attempt 1: ${line}`)).then(
      () => 'completed',
      (error: unknown) => error,
    )
    await waiting

    // Attempt 2 takes the job (BullMQ moved it back to the queue), resumes from the saved position and finishes the shard.
    stored.lockedBy = 'attempt-2'
    const second = new ChatServiceClient(server.clientOptions())
    const result = await exportShard(second, jobFor(stored, []), 'attempt-2', undefined, (line) => log.push(`attempt 2: ${line}`))
    expect(result.written).toBe(reference.length)

    // Attempt 1's page comes back: it must find the job gone before writing a line of it.
    held.open()
    expect(await firstEnded).toBeInstanceOf(LockLostError)
    await Promise.all([first.close(), second.close(), held.agent.close(), server.close()])

    const lines = (await readFile(out, 'utf8')).split('\n').slice(0, -1)
    const twice = lines.filter((line, index) => lines.indexOf(line) !== index)
    expect(twice, `lines written twice; the attempts said:\n${log.join('\n')}`).toEqual([])
    expect(lines).toHaveLength(reference.length)
    expect(new Set(lines)).toEqual(new Set(reference))
  })
})
