// Starts a benchmark server script (bench/fake-process.ts, bench/export/server-process.ts) in a
// child process and resolves with the JSON line it prints once it listens. The server runs in its
// own process so that its CPU time and memory are not counted in the client's process (it still
// shares the machine's cores: see "Machine" in BENCHMARKS.md).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'

export interface Child<T> {
  readonly info: T
  stop(): Promise<void>
}

/** Runs `node <flags> <script> <args>` and waits for its first stdout line, parsed as JSON. */
export async function spawnJsonChild<T>(script: URL, args: readonly string[] = [], flags: readonly string[] = []): Promise<Child<T>> {
  const child = spawn(process.execPath, [...flags, script.pathname, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout })
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${script.pathname} exited with ${String(code)} before it was ready`)
  })
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string]
  exited.catch(() => undefined)
  lines.close()
  return {
    info: JSON.parse(line) as T,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const gone = once(child, 'exit')
      child.kill('SIGTERM')
      await gone
    },
  }
}
