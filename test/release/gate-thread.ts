// The release gate (scripts/release/gate.ts) in a worker thread that the test file keeps for all its
// runs: the gate's TypeScript work (parsing the API reports, comparing their types, compiling the
// fixtures) then runs outside the test worker's V8 isolate, which `--coverage` (CI) instruments
// block by block and which made it take twice the CPU there. The gate is scripts/, not src/: its
// coverage is not measured. One thread for the file, its modules loaded once; runs one at a time.
import { parentPort, Worker, workerData } from 'node:worker_threads'
import type { GateOptions } from '../../scripts/release/gate.ts'

/** The gate's options without `print`: the thread keeps the lines it prints. */
export type ThreadGateOptions = Omit<GateOptions, 'print'>

interface Request {
  readonly id: number
  readonly options: ThreadGateOptions
}
type Answer =
  { readonly id: number; readonly problems: string[]; readonly lines: string[] } | { readonly id: number; readonly error: string }

/** What a run gives: the problems the gate returned and every line it printed. */
export interface GateRun {
  readonly problems: readonly string[]
  readonly lines: readonly string[]
}

/** A thread running the gate; `close()` ends it. */
export interface GateThread {
  run(options: ThreadGateOptions): Promise<GateRun>
  close(): Promise<void>
}

/** Starts the thread (its data marks it: a test worker may itself be a thread, with vitest's data). */
export function startGateThread(): GateThread {
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: 'release-gate' } })
  worker.unref()
  const waiting = new Map<number, { resolve: (run: GateRun) => void; reject: (error: Error) => void }>()
  let next = 0
  worker.on('message', (answer: Answer) => {
    const pending = waiting.get(answer.id)
    waiting.delete(answer.id)
    if ('error' in answer) pending?.reject(new Error(`the release gate threw in its thread: ${answer.error}`))
    else pending?.resolve({ problems: answer.problems, lines: answer.lines })
  })
  const fail = (error: Error): void => {
    for (const pending of waiting.values()) pending.reject(error)
    waiting.clear()
  }
  worker.on('error', fail)
  worker.on('exit', (code) => {
    fail(new Error(`the release gate's thread ended (exit code ${code})`))
  })
  return {
    run: (options) =>
      new Promise((resolve, reject) => {
        const id = next++
        waiting.set(id, { resolve, reject })
        worker.postMessage({ id, options } satisfies Request)
      }),
    close: async () => {
      await worker.terminate()
    },
  }
}

if ((workerData as { role?: string } | null)?.role === 'release-gate' && parentPort !== null) {
  const port = parentPort
  const { releaseGate } = await import('../../scripts/release/gate.ts')
  port.on('message', ({ id, options }: Request) => {
    const lines: string[] = []
    try {
      const problems = releaseGate({ ...options, print: (line) => lines.push(line) })
      port.postMessage({ id, problems, lines } satisfies Answer)
    } catch (error) {
      port.postMessage({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies Answer)
    }
  })
}
