// Starts scripts/fake-server.ts in a child process and resolves with its URL and key; kill() stops it.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'

export interface SpawnedFake {
  url: string
  keyId: string
  keySecret: string
  conversationId: string
  stop(): Promise<void>
}

export async function spawnFake(args: string[] = []): Promise<SpawnedFake> {
  const script = new URL('./fake-server.ts', import.meta.url).pathname
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout })
  const [line] = (await once(lines, 'line')) as [string]
  lines.close()
  const info = JSON.parse(line) as Omit<SpawnedFake, 'stop'>
  return {
    ...info,
    stop: async () => {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}
