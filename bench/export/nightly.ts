// The nightly benchmark of issue 16 (see BENCHMARKS.md, "Only what is new"). On the export
// server's company, night 2 is the dataset after the fake's appendMessages on a share of the
// conversations (bench/export/dataset.ts `grow`). Contenders, at the same concurrency, each run
// checked exactly (ids and order) against what night 2 must deliver:
// - SDK listAll: the full export (what a nightly job without listNew reads);
// - SDK listNew({ checkpoint }), the checkpoint of a first run on night 1; `checkpoint()` taken at the end;
// - the hand-written incremental pass over raw undici (bench/export/raw-incremental.ts), with what it
//   stored after night 1;
// - a night with nothing new: listNew with night 2's checkpoint, and the hand-written pass with
//   night 2's state, on night 2 again: each must cost exactly the conversation scan, ceil(C / 100).
// Requests are counted by the server, per run. Contenders interleave over rounds (rotated); ratios
// are taken per round.
import type { Agent, Dispatcher } from 'undici'
import type { MessagesCheckpoint, resources } from 'chat-service-sdk'
import { credentialsBody, decompressingFloor, floorAgent, floorHeaders, identityHeaders } from '../floor.ts'
import { collectGarbage, fmtSpread, rotate, spread, table, type Spread } from '../lib.ts'
import { listAllOf, sdkClient, timed, type ExportRun, type Target } from './contenders.ts'
import type { SpawnedExportServer } from './control.ts'
import type { NightlyExpected } from './dataset.ts'
import { rawIncrementalPages } from './raw-incremental.ts'
import type { Encoding } from './server.ts'

/** Goal thresholds (issue 16). */
export const NIGHTLY_GOAL = { fewerRequests: 10, lessTime: 8 }

export interface NightlyConfig {
  concurrency: number[]
  rounds: number
  runBudgetMs: number
}

/** Checks that a run yields exactly `expected`, in order; one comparison per message, like the export's order check. */
class ExactCheck {
  count = 0
  readonly #name: string
  readonly #expected: readonly string[]
  constructor(name: string, expected: readonly string[]) {
    this.#name = name
    this.#expected = expected
  }
  push(id: string): void {
    if (id !== this.#expected[this.count])
      throw new Error(`${this.#name}: message ${this.count} is ${id}, expected ${this.#expected[this.count] ?? '(the end)'}`)
    this.count++
  }
  finish(): void {
    if (this.count !== this.#expected.length)
      throw new Error(`${this.#name}: yielded ${this.count} messages, expected ${this.#expected.length}`)
  }
}

interface NightlyContender {
  name: string
  /** Which night and which comparison the row belongs to. */
  kind: 'full' | 'listNew' | 'hand' | 'listNew-empty' | 'hand-empty'
  concurrency: number
  run(budgetMs: number): Promise<ExportRun>
  close(): Promise<void>
}

type ListNew = (params: { checkpoint?: MessagesCheckpoint; limit?: number; concurrency?: number }) => resources.NewMessages

function listNewOf(client: ReturnType<typeof sdkClient>): ListNew | undefined {
  const messages = client.conversations.messages as unknown as { listNew?: unknown }
  return typeof messages.listNew === 'function' ? (messages.listNew.bind(messages) as ListNew) : undefined
}

interface Figures {
  name: string
  kind: NightlyContender['kind']
  concurrency: number
  requests: Spread
  /** Most requests the server held at once, per run. */
  maxInFlight: Spread
  wallMs: Spread
  cpuMs: Spread
  messages: number
  /** Per round, against the full export (listAll) at the same concurrency. */
  fewerRequests?: Spread
  lessTime?: Spread
  /** Per round, this wall / the hand-written pass's wall on the same night and concurrency. */
  vsHand?: Spread
}

export interface NightlyResult {
  figures: Figures[]
  goals: string[][]
  block: string[]
  expected: Omit<NightlyExpected, 'newIds' | 'allIds'>
}

/**
 * Runs the section on `server` (started with `grow`), leaving it on night 1 at the end.
 * `encoding`: what the SDK's default requests get, asked for by the hand-written pass too.
 */
export async function nightly(
  server: SpawnedExportServer,
  target: Target,
  encoding: Encoding,
  config: NightlyConfig,
  log: (line: string) => void,
): Promise<NightlyResult | string> {
  const expected = server.nightly
  if (expected === undefined) throw new Error('nightly: the export server was started without night 2')
  const probe = sdkClient(target)
  const hasListNew = listNewOf(probe) !== undefined && listAllOf(probe) !== undefined
  await probe.close()
  if (!hasListNew) return 'listNew not implemented in this SDK build'

  const agent: Agent = floorAgent()
  const dispatcher: Dispatcher = encoding === 'identity' ? agent : decompressingFloor(agent)
  const headers = encoding === 'identity' ? identityHeaders : { ...floorHeaders, 'accept-encoding': encoding }
  const body = credentialsBody(target)
  const hand = (concurrency: number, stored: ReadonlyMap<string, number>, next: Map<string, number>) =>
    rawIncrementalPages({ dispatcher, origin: target.baseUrl, headers, body, concurrency, limit: 100, stored, next })

  const clients: ReturnType<typeof sdkClient>[] = []
  const contenders: NightlyContender[] = []
  try {
    // Night 1: a first listNew run (every message) gives the checkpoint; the hand-written pass with
    // nothing stored gives its state. Both are checked against the night-1 export.
    await server.night(1)
    const setup = sdkClient(target)
    clients.push(setup)
    const first = listNewOf(setup)!({ limit: 100, concurrency: 16 })
    let night1Messages = 0
    for await (const message of first) if (message.id !== '') night1Messages++
    if (night1Messages !== target.expected.messages || first.summary?.new !== expected.conversations)
      throw new Error(
        `nightly: a first listNew run yielded ${night1Messages} messages (${JSON.stringify(first.summary)}), expected ${target.expected.messages}`,
      )
    const checkpoint1 = first.checkpoint()
    const stored1 = new Map<string, number>()
    let handNight1 = 0
    for await (const page of hand(16, new Map(), stored1)) handNight1 += page.length
    if (handNight1 !== target.expected.messages) throw new Error(`nightly: the hand-written pass read ${handNight1} messages on night 1`)

    await server.night(2)
    // Night 2's checkpoint and state, for the night with nothing new.
    const second = listNewOf(setup)!({ checkpoint: checkpoint1, limit: 100, concurrency: 16 })
    const check2 = new ExactCheck('listNew, night 2 (set-up)', expected.newIds)
    for await (const m of second) check2.push(m.id)
    check2.finish()
    const checkpoint2 = second.checkpoint()
    const stored2 = new Map<string, number>()
    let handNight2 = 0
    for await (const page of hand(16, stored1, stored2)) handNight2 += page.length
    if (handNight2 !== expected.added)
      throw new Error(`nightly: the hand-written pass read ${handNight2} messages on night 2, expected ${expected.added}`)

    for (const c of config.concurrency) {
      const client = sdkClient(target)
      clients.push(client)
      const listAll = listAllOf(client)!
      const listNew = listNewOf(client)!
      contenders.push({
        name: `SDK listAll @${c} (full export)`,
        kind: 'full',
        concurrency: c,
        run: (budgetMs) =>
          timed('listAll night 2', budgetMs, async () => {
            const check = new ExactCheck('listAll night 2', expected.allIds)
            const all = listAll({ limit: 100, concurrency: c })
            for await (const m of all) check.push(m.id)
            check.finish()
            if (all.progress.done !== check.count) throw new Error(`listAll night 2: progress.done ${all.progress.done}`)
            return check.count
          }),
        close: async () => undefined,
      })
      const sdkRun = (name: string, checkpoint: MessagesCheckpoint, ids: readonly string[], grown: number) => (budgetMs: number) =>
        timed(name, budgetMs, async () => {
          const check = new ExactCheck(name, ids)
          const changes = listNew({ checkpoint, limit: 100, concurrency: c })
          for await (const m of changes) check.push(m.id)
          const next = changes.checkpoint()
          check.finish()
          const s = changes.summary
          if (
            s === undefined ||
            s.grown !== grown ||
            s.new !== 0 ||
            s.unchanged !== expected.conversations - grown ||
            s.rewound.length > 0 ||
            s.deleted.length > 0
          )
            throw new Error(`${name}: summary ${JSON.stringify(s)}; expected ${grown} grown of ${expected.conversations}`)
          if (Object.keys(next.conversations).length !== expected.conversations)
            throw new Error(`${name}: the checkpoint lost conversations`)
          return check.count
        })
      const handRun = (name: string, stored: ReadonlyMap<string, number>, ids: readonly string[]) => (budgetMs: number) =>
        timed(name, budgetMs, async () => {
          const check = new ExactCheck(name, ids)
          const next = new Map<string, number>()
          for await (const page of hand(c, stored, next)) for (const m of page) check.push(m.id)
          check.finish()
          if (next.size !== expected.conversations) throw new Error(`${name}: stored ${next.size} conversations`)
          return check.count
        })
      contenders.push(
        {
          name: `SDK listNew @${c}`,
          kind: 'listNew',
          concurrency: c,
          run: sdkRun('listNew night 2', checkpoint1, expected.newIds, expected.grown),
          close: async () => undefined,
        },
        {
          name: `hand-written incremental, raw undici @${c}`,
          kind: 'hand',
          concurrency: c,
          run: handRun('hand-written night 2', stored1, expected.newIds),
          close: async () => undefined,
        },
        {
          name: `SDK listNew @${c}, nothing new`,
          kind: 'listNew-empty',
          concurrency: c,
          run: sdkRun('listNew, nothing new', checkpoint2, [], 0),
          close: async () => undefined,
        },
        {
          name: `hand-written incremental @${c}, nothing new`,
          kind: 'hand-empty',
          concurrency: c,
          run: handRun('hand-written, nothing new', stored2, []),
          close: async () => undefined,
        },
      )
    }

    const runs = new Map<string, { run: ExportRun; requests: number; maxInFlight: number }[]>(contenders.map((c) => [c.name, []]))
    for (const c of contenders) await c.run(config.runBudgetMs) // warm-up, checked
    for (let round = 0; round < config.rounds; round++) {
      const started = performance.now()
      for (const c of rotate(contenders, round)) {
        collectGarbage()
        await server.reset()
        const run = await c.run(config.runBudgetMs)
        const stats = await server.stats()
        if (stats.errors > 0) throw new Error(`${c.name}: the server answered ${stats.errors} requests with an error`)
        runs.get(c.name)!.push({ run, requests: stats.requests, maxInFlight: stats.maxInFlight })
      }
      log(`  nightly round ${round + 1}/${config.rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }

    const figures: Figures[] = contenders.map((c) => {
      const mine = runs.get(c.name)!
      const same = (kind: NightlyContender['kind']) =>
        runs.get(contenders.find((x) => x.kind === kind && x.concurrency === c.concurrency)!.name)!
      const full = same('full')
      const handRows = c.kind === 'listNew' ? same('hand') : c.kind === 'listNew-empty' ? same('hand-empty') : undefined
      return {
        name: c.name,
        kind: c.kind,
        concurrency: c.concurrency,
        requests: spread(mine.map((r) => r.requests)),
        maxInFlight: spread(mine.map((r) => r.maxInFlight)),
        wallMs: spread(mine.map((r) => r.run.wallMs)),
        cpuMs: spread(mine.map((r) => r.run.cpuMs)),
        messages: mine[0]!.run.messages,
        ...(c.kind === 'full'
          ? {}
          : {
              fewerRequests: spread(mine.map((r, i) => full[i]!.requests / r.requests)),
              lessTime: spread(mine.map((r, i) => full[i]!.run.wallMs / r.run.wallMs)),
            }),
        ...(handRows === undefined ? {} : { vsHand: spread(mine.map((r, i) => r.run.wallMs / handRows[i]!.run.wallMs)) }),
      }
    })
    const { newIds: _n, allIds: _a, ...summary } = expected
    return { figures, ...verdicts(figures, expected), expected: summary }
  } finally {
    await server.night(1)
    for (const c of clients) await c.close()
    await agent.close()
  }
}

function verdicts(figures: Figures[], expected: NightlyExpected): { goals: string[][]; block: string[] } {
  const goals: string[][] = []
  const block: string[] = []
  const x = (s: Spread | undefined): string => (s === undefined ? '–' : `${fmtSpread(s, 1)}×`)
  for (const f of figures) {
    if (f.kind === 'listNew') {
      goals.push([
        `listNew @${f.concurrency}: ≥ ${NIGHTLY_GOAL.fewerRequests}× fewer requests than the full export`,
        x(f.fewerRequests),
        f.fewerRequests!.median >= NIGHTLY_GOAL.fewerRequests ? 'met' : 'MISSED',
      ])
      goals.push([
        `listNew @${f.concurrency}: ≥ ${NIGHTLY_GOAL.lessTime}× less time than the full export`,
        x(f.lessTime),
        f.lessTime!.min >= NIGHTLY_GOAL.lessTime
          ? 'met (every round)'
          : f.lessTime!.median >= NIGHTLY_GOAL.lessTime
            ? 'met (median)'
            : 'MISSED',
      ])
      block.push(
        `nightly listNew@${f.concurrency} vs full export: ${x(f.fewerRequests)} fewer requests, ${x(f.lessTime)} less time; wall / hand-written ${f.vsHand === undefined ? '–' : `${fmtSpread(f.vsHand, 2)}×`}`,
      )
    }
    if (f.kind === 'listNew-empty') {
      const exact = f.requests.min === expected.scanRequests && f.requests.max === expected.scanRequests
      goals.push([
        `listNew @${f.concurrency}, nothing new: exactly ceil(C / 100) = ${expected.scanRequests} requests`,
        fmtSpread(f.requests, 0),
        exact ? 'met' : 'MISSED',
      ])
      block.push(
        `nightly listNew@${f.concurrency} nothing new: ${fmtSpread(f.requests, 0)} requests (goal exactly ${expected.scanRequests})`,
      )
    }
  }
  return { goals, block }
}

/** The section's Markdown: the table and the notes under it. */
export function nightlyTable(result: NightlyResult): string {
  const e = result.expected
  const x = (s: Spread | undefined, d = 1): string => (s === undefined ? '–' : `${fmtSpread(s, d)}×`)
  const ms = (s: Spread): string => fmtSpread(s, 0)
  return [
    table(
      [
        'night',
        'contender',
        'requests',
        'max in flight (server)',
        'messages',
        'wall ms',
        'client CPU ms',
        'requests: full / this',
        'wall: full / this',
        'wall / hand-written',
      ],
      result.figures.map((f) => [
        f.kind.endsWith('empty') ? '3 (nothing new)' : '2',
        f.name,
        fmtSpread(f.requests, 0),
        fmtSpread(f.maxInFlight, 0),
        String(f.messages),
        ms(f.wallMs),
        ms(f.cpuMs),
        f.kind === 'full' ? '1' : x(f.fewerRequests),
        f.kind === 'full' ? '1' : x(f.lessTime),
        f.vsHand === undefined ? '–' : x(f.vsHand, 2),
      ]),
    ),
    '',
    `Night 2: ${e.grown} of ${e.conversations} conversations grew by ${e.added} messages in all. Requests by plan: full export ${e.fullRequests}; ` +
      `hand-written pass ${e.incrementalRequests} (scan + pages from the one holding the first new message); listNew ${e.listNewRequests} ` +
      `(scan + pages from the one holding the last message it had read, whose id it checks); nothing new: the scan, ${e.scanRequests}.`,
  ].join('\n')
}
