// Starts the fake service (`chat-service-fake`, from source: src/testing/cli.ts) in a child
// process, so that the server's work and memory are not counted in the caller's, and resolves with
// its URL, its key and the id of its first conversation; stop() ends it. The child also stops when
// this process goes away (it watches its IPC channel). Used by scripts/stress.ts.
//   spawnFake(['--agents', '20', '--latency', '5'])   // any option of `chat-service-fake --help`
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { request } from 'undici'

export interface SpawnedFake {
  url: string
  keyId: string
  keySecret: string
  conversationId: string
  stop(): Promise<void>
}

const CLI = new URL('../src/testing/cli.ts', import.meta.url).pathname

export async function spawnFake(args: string[] = []): Promise<SpawnedFake> {
  const child = spawn(process.execPath, ['--no-warnings', CLI, '--json', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  const exited = once(child, 'exit')
  const lines = createInterface({ input: child.stdout! }) // stdio[1] is 'pipe'
  const first = await Promise.race([once(lines, 'line'), exited.then(() => undefined)])
  lines.close()
  if (first === undefined) throw new Error(`chat-service-fake ${args.join(' ')} exited before it was ready`)
  const { baseUrl, keyId, keySecret } = JSON.parse(String(first[0])) as { baseUrl: string; keyId: string; keySecret: string }
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await exited
  }
  try {
    const response = await request(`${baseUrl}/rest/v1/conversations?limit=1`, {
      method: 'GET',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keyId, keySecret }),
    })
    const page = (await response.body.json()) as { data?: { id: string }[] }
    return { url: baseUrl, keyId, keySecret, conversationId: page.data?.[0]?.id ?? '', stop }
  } catch (error) {
    await stop()
    throw error
  }
}
