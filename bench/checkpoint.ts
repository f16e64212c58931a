// The size and JSON time of listNew's checkpoint per 1,000,000 conversations (issue 16, "Size").
// Builds a MessagesCheckpoint of N conversations with realistic entries, then times, over rounds:
// - JSON.stringify and JSON.parse of it, and its size in bytes (UTF-8);
// - what listNew does with it before sending anything: `listNew({ checkpoint })` on the BUILT
//   package (argument check, validation of every entry, merge into its map; nothing is sent), and
//   the validation and the merge alone (checkpointIssues, mergeCheckpoints, imported from src/
//   through Node's type stripping, like bench/schema.ts: they are internal);
// - `checkpoint()` on a run holding N conversations (the snapshot a nightly job persists);
// - the same for 8 shard checkpoints passed together (merge and shard filter), and the heap the
//   parsed checkpoint and listNew's map hold.
// Two id styles: the fake's short ids (`conv_0000001`, `msg_000000001`), and ids as long as a
// prefixed UUID (`conv_` + 36 characters), the longer end of what services use. Timestamps are ISO
// 8601 with milliseconds; `read` is spread like the export dataset's message counts (25–321).
// It reports; it never fails on a figure.
//   npm run bench:checkpoint                        1,000,000 conversations, 5 rounds
//   npm run bench:checkpoint -- --conversations 100000 --rounds 3
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import v8 from 'node:v8'
import { parseArgs } from 'node:util'
import { ChatServiceClient, shardOf, type MessagesCheckpoint } from 'chat-service-sdk'
import { mulberry32 } from 'chat-service-sdk/testing'
import { checkpointIssues, mergeCheckpoints, messageIdFingerprint } from '../src/pagination/checkpoint.ts'
import { collectGarbage, fmtSpread, machineInfo, MB, spread, table, type Spread } from './lib.ts'

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
  },
})
const N = Number(values.conversations)
const ROUNDS = Number(values.rounds)
const SHARDS = 8
/** Goals of issue 16 per 1,000,000 conversations. */
const GOAL = { bytes: 100e6, seconds: 3 }

const out = (line = ''): void => void process.stdout.write(`${line}\n`)
const log = (line: string): void => void process.stderr.write(`${line}\n`)
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('run with --expose-gc (npm run bench:checkpoint does)')

type Style = 'short' | 'uuid'

function build(style: Style, n: number): MessagesCheckpoint {
  const next = mulberry32(16)
  const checkpoint: MessagesCheckpoint = { version: 2, conversations: [], read: [], lastMessageIds: [], updatedAt: [] }
  const base = Date.parse('2026-01-01T00:00:00.000Z')
  for (let i = 1; i <= n; i++) {
    const id = style === 'short' ? `conv_${String(i).padStart(7, '0')}` : `conv_${randomUUID()}`
    // 1 % never had a message; the rest read 25–321 (the export dataset's spread).
    const read = next() < 0.01 ? 0 : 25 + Math.floor(next() * 297)
    const lastId = read === 0 ? null : style === 'short' ? `msg_${String(i * 300 + read).padStart(9, '0')}` : `msg_${randomUUID()}`
    checkpoint.conversations.push(id)
    checkpoint.read.push(read)
    checkpoint.lastMessageIds.push(lastId)
    checkpoint.updatedAt.push(new Date(base + Math.floor(next() * 300 * 86_400_000)).toISOString())
  }
  return checkpoint
}

/** The conversations of `checkpoint` whose shard is `index` of `count`, as that shard's listNew would hold them. */
function shardPart(checkpoint: MessagesCheckpoint, index: number, count: number): MessagesCheckpoint {
  const part: MessagesCheckpoint = { version: 2, conversations: [], read: [], lastMessageIds: [], updatedAt: [] }
  checkpoint.conversations.forEach((id, i) => {
    if (shardOf(id, count) !== index) return
    part.conversations.push(id)
    part.read.push(checkpoint.read[i] as number)
    part.lastMessageIds.push(checkpoint.lastMessageIds[i] ?? null)
    part.updatedAt.push(checkpoint.updatedAt[i] as string)
  })
  return part
}

/**
 * Milliseconds of one call of `fn`: wall time, and this process's CPU time (user + system, every
 * thread: V8's helper threads too). On a machine shared with other work the wall time stretches by
 * the run queue; the CPU time much less, so both are printed.
 */
function time<T>(fn: () => T): { ms: number; cpuMs: number; value: T } {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const value = fn()
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { ms, cpuMs: (used.user + used.system) / 1000, value }
}

/** Heap growth (MB) that `make` leaves live after a full GC. */
function retained(make: () => unknown): number {
  collectGarbage()
  const before = v8.getHeapStatistics().used_heap_size
  const kept = make()
  collectGarbage()
  const after = v8.getHeapStatistics().used_heap_size
  if (kept === undefined) throw new Error('nothing kept')
  return (after - before) / MB
}

interface StyleFigures {
  style: Style
  bytes: number
  bytesPerConversation: number
  /** The size of `checkpoint({ compact: true })` (each last message id as its fingerprint). */
  compactBytes: number
  stringifyMs: Spread
  parseMs: Spread
  validateMs: Spread
  mergeMs: Spread
  listNewMs: Spread
  checkpointMs: Spread
  shardMergeMs: Spread
  /** stringify + parse + listNew() + checkpoint(), per round: what one nightly run pays for its checkpoint. */
  roundTripMs: Spread
  /** The same, as CPU time of this process. */
  roundTripCpuMs: Spread
  /** stringify + parse + listNew(), the goal's own reading (without checkpoint()). */
  goalMs: Spread
  goalCpuMs: Spread
  parsedHeapMB: number
  mapHeapMB: number
}

const machine = machineInfo()
out(`# listNew checkpoint: size and JSON time, ${N.toLocaleString('en-US')} conversations`)
out()
out(`Node ${machine.node}, os.availableParallelism() = ${machine.parallelism}, ${machine.cpu}, ${machine.platform}`)
out(
  `Load average at start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)
// Nothing is sent: listNew() checks and merges the checkpoint when called; iteration would send.
const client = new ChatServiceClient({ baseUrl: 'http://127.0.0.1:9', keyId: 'bench', keySecret: 'bench-secret', logLevel: 'off' })
const figures: StyleFigures[] = []
try {
  for (const style of ['short', 'uuid'] as const) {
    const checkpoint = build(style, N)
    const text = JSON.stringify(checkpoint)
    const bytes = Buffer.byteLength(text)
    const compact = {
      ...checkpoint,
      lastMessageIds: checkpoint.lastMessageIds.map((id) => (typeof id === 'string' ? messageIdFingerprint(id) : id)),
    }
    const compactBytes = Buffer.byteLength(JSON.stringify(compact))
    // Shard checkpoints: the same conversations, split as 8 workers' listNew would hold them.
    const shards: MessagesCheckpoint[] = Array.from({ length: SHARDS }, (_, index) => shardPart(checkpoint, index, SHARDS))
    const parsedHeapMB = retained(() => JSON.parse(text) as unknown)
    const mapHeapMB = retained(() => mergeCheckpoints(checkpoint, () => true))
    const rounds = {
      stringify: [] as number[],
      parse: [] as number[],
      validate: [] as number[],
      merge: [] as number[],
      listNew: [] as number[],
      checkpoint: [] as number[],
      shardMerge: [] as number[],
      roundTrip: [] as number[],
      roundTripCpu: [] as number[],
      goal: [] as number[],
      goalCpu: [] as number[],
    }
    for (let round = 0; round < ROUNDS; round++) {
      collectGarbage()
      const s = time(() => JSON.stringify(checkpoint))
      if (s.value.length !== text.length) throw new Error('stringify changed size')
      collectGarbage()
      const p = time(() => JSON.parse(text) as MessagesCheckpoint)
      collectGarbage()
      const v = time(() => checkpointIssues(p.value))
      if (v.value.length > 0) throw new Error(`the checkpoint is malformed: ${JSON.stringify(v.value[0])}`)
      collectGarbage()
      const m = time(() => mergeCheckpoints(p.value, () => true))
      if (m.value.size !== N) throw new Error(`merged ${m.value.size} entries`)
      collectGarbage()
      const l = time(() => client.conversations.messages.listNew({ checkpoint: p.value }))
      collectGarbage()
      const c = time(() => l.value.checkpoint())
      if (c.value.conversations.length !== N) throw new Error('checkpoint() lost entries')
      collectGarbage()
      const sh = time(() => client.conversations.messages.listNew({ checkpoint: shards, shard: { index: 0, count: SHARDS } }))
      const shardEntries = sh.value.checkpoint().conversations.length
      if (shardEntries !== shards[0]!.conversations.length) throw new Error(`shard 0 kept ${shardEntries} entries`)
      rounds.stringify.push(s.ms)
      rounds.parse.push(p.ms)
      rounds.validate.push(v.ms)
      rounds.merge.push(m.ms)
      rounds.listNew.push(l.ms)
      rounds.checkpoint.push(c.ms)
      rounds.shardMerge.push(sh.ms)
      rounds.roundTrip.push(s.ms + p.ms + l.ms + c.ms)
      rounds.roundTripCpu.push(s.cpuMs + p.cpuMs + l.cpuMs + c.cpuMs)
      rounds.goal.push(s.ms + p.ms + l.ms)
      rounds.goalCpu.push(s.cpuMs + p.cpuMs + l.cpuMs)
      log(
        `  ${style} round ${round + 1}/${ROUNDS}: round trip ${((s.ms + p.ms + l.ms + c.ms) / 1000).toFixed(2)} s (CPU ${((s.cpuMs + p.cpuMs + l.cpuMs + c.cpuMs) / 1000).toFixed(2)} s); stringify ${s.ms.toFixed(0)}, parse ${p.ms.toFixed(0)}, listNew ${l.ms.toFixed(0)}, checkpoint() ${c.ms.toFixed(0)} ms; load ${os.loadavg()[0]!.toFixed(1)}`,
      )
    }
    figures.push({
      style,
      bytes,
      bytesPerConversation: bytes / N,
      compactBytes,
      stringifyMs: spread(rounds.stringify),
      parseMs: spread(rounds.parse),
      validateMs: spread(rounds.validate),
      mergeMs: spread(rounds.merge),
      listNewMs: spread(rounds.listNew),
      checkpointMs: spread(rounds.checkpoint),
      shardMergeMs: spread(rounds.shardMerge),
      roundTripMs: spread(rounds.roundTrip),
      roundTripCpuMs: spread(rounds.roundTripCpu),
      goalMs: spread(rounds.goal),
      goalCpuMs: spread(rounds.goalCpu),
      parsedHeapMB,
      mapHeapMB,
    })
  }
} finally {
  await client.close()
}

const ms = (s: Spread): string => fmtSpread(s, 0)
const per = N / 1e6
out()
out(`${ROUNDS} rounds; median (min–max) ms. Garbage collected before every timed step.`)
out()
out(
  table(
    ['figure', ...figures.map((f) => (f.style === 'short' ? 'short ids (the fake\u2019s)' : 'prefixed-UUID ids'))],
    [
      ['size, MB (10^6 bytes)', ...figures.map((f) => (f.bytes / 1e6).toFixed(1))],
      ['bytes per conversation', ...figures.map((f) => f.bytesPerConversation.toFixed(1))],
      ['size of checkpoint({ compact: true }), MB', ...figures.map((f) => (f.compactBytes / 1e6).toFixed(1))],
      ['JSON.stringify ms', ...figures.map((f) => ms(f.stringifyMs))],
      ['JSON.parse ms', ...figures.map((f) => ms(f.parseMs))],
      ['listNew({ checkpoint }) ms (check + merge, nothing sent)', ...figures.map((f) => ms(f.listNewMs))],
      ['  of which validation (checkpointIssues) ms', ...figures.map((f) => ms(f.validateMs))],
      ['  of which merge (mergeCheckpoints) ms', ...figures.map((f) => ms(f.mergeMs))],
      ['checkpoint() ms', ...figures.map((f) => ms(f.checkpointMs))],
      [`listNew({ checkpoint: ${SHARDS} shards' checkpoints, shard }) ms`, ...figures.map((f) => ms(f.shardMergeMs))],
      ['stringify + parse + listNew() ms (the goal)', ...figures.map((f) => ms(f.goalMs))],
      ['  the same, client CPU ms', ...figures.map((f) => ms(f.goalCpuMs))],
      ['round trip ms (stringify + parse + listNew() + checkpoint())', ...figures.map((f) => ms(f.roundTripMs))],
      ['  the same, client CPU ms', ...figures.map((f) => ms(f.roundTripCpuMs))],
      ['heap held by the parsed checkpoint, MB', ...figures.map((f) => f.parsedHeapMB.toFixed(0))],
      ["heap held by listNew's merged map, MB", ...figures.map((f) => f.mapHeapMB.toFixed(0))],
    ],
  ),
)
out()
out(`## Goals (issue 16), per 1,000,000 conversations${per === 1 ? '' : ` (measured on ${N.toLocaleString('en-US')}, scaled linearly)`}`)
out()
out(
  table(
    ['goal', ...figures.map((f) => f.style), 'verdict'],
    [
      [
        `size ≤ ${GOAL.bytes / 1e6} MB`,
        ...figures.map((f) => `${(f.bytes / per / 1e6).toFixed(1)} MB`),
        figures.every((f) => f.bytes / per <= GOAL.bytes) ? 'met' : 'MISSED',
      ],
      [
        `size ≤ ${GOAL.bytes / 1e6} MB, with the smaller of checkpoint() and checkpoint({ compact: true })`,
        ...figures.map((f) => `${(Math.min(f.bytes, f.compactBytes) / per / 1e6).toFixed(1)} MB`),
        figures.every((f) => Math.min(f.bytes, f.compactBytes) / per <= GOAL.bytes) ? 'met' : 'MISSED',
      ],
      [
        `stringify + parse + listNew() ≤ ${GOAL.seconds} s (wall)`,
        ...figures.map(
          (f) =>
            `${(f.goalMs.median / per / 1000).toFixed(2)} s (${(f.goalMs.min / per / 1000).toFixed(2)}–${(f.goalMs.max / per / 1000).toFixed(2)})`,
        ),
        figures.every((f) => f.goalMs.median / per <= GOAL.seconds * 1000) ? 'met' : 'MISSED',
      ],
      [
        `the same, client CPU ≤ ${GOAL.seconds} s (less sensitive to other work on the machine)`,
        ...figures.map(
          (f) =>
            `${(f.goalCpuMs.median / per / 1000).toFixed(2)} s (${(f.goalCpuMs.min / per / 1000).toFixed(2)}–${(f.goalCpuMs.max / per / 1000).toFixed(2)})`,
        ),
        figures.every((f) => f.goalCpuMs.median / per <= GOAL.seconds * 1000) ? 'met' : 'MISSED',
      ],
      [
        `stringify + parse + listNew() + checkpoint() ≤ ${GOAL.seconds} s (wall; what a nightly run pays in all)`,
        ...figures.map((f) => `${(f.roundTripMs.median / per / 1000).toFixed(2)} s (max ${(f.roundTripMs.max / per / 1000).toFixed(2)})`),
        figures.every((f) => f.roundTripMs.median / per <= GOAL.seconds * 1000) ? 'met' : 'MISSED',
      ],
    ],
  ),
)
out()
out(
  `Load average at end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)
