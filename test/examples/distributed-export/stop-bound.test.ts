// examples/distributed-export/: a worker whose Redis stops answering (a connection left hanging, as
// ioredis 6.0 can leave one after a Redis restart) still exits on SIGTERM: within its 10 s stop
// bound, with status 1, saying why. (kit.ts: how the example runs here.)
import { createServer, connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { FAST, until, useDistributedExport } from './kit.ts'

const kit = useDistributedExport()

/** A TCP relay to `port` that can go silent: bytes in either direction are then held, never passed on. */
async function silenceableRelay(port: number): Promise<{ url: string; silence: () => void; close: () => Promise<void> }> {
  let silent = false
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => undefined)
    }
    client.on('data', (chunk) => silent || upstream.write(chunk))
    upstream.on('data', (chunk) => silent || client.write(chunk))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return {
    url: `redis://127.0.0.1:${address.port}`,
    silence: () => {
      silent = true
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      server.close()
      await once(server, 'close')
    },
  }
}

describe('examples/distributed-export: stopping a worker', () => {
  it(
    'a worker whose Redis never answers exits within its 10 s stop bound after SIGTERM, with status 1, saying so',
    { timeout: 60_000 },
    async () => {
      const fake = createFakeChatService({ seed: generateDataset({ seed: 3, conversations: 8, messages: 400 }), latencyMs: 5 })
      // Every page of messages is held for 30 s: the worker's shard job is mid-page when Redis goes silent.
      fake.failNext(1_000, { delayMs: 30_000, match: { method: 'GET', path: /\/messages$/ } })
      const server = await kit.serve(fake)
      const relay = await silenceableRelay(kit.redis.port)
      kit.cleanup(relay.close)
      const [worker] = await kit.startWorkers(kit.environment(server, 'stop-bound', FAST, relay.url), 1)
      // The producer (on Redis directly) gives it one shard, the whole night.
      kit.start(
        'producer.ts',
        ['--out', join(kit.dir, 'stop-bound'), '--shards', '1', '--night', 'n1'],
        kit.environment(server, 'stop-bound', FAST),
      )
      await until(
        () => worker!.lines.some((line) => line.includes('started')),
        () => kit.allOutput(),
      )
      relay.silence()
      const began = performance.now()
      worker!.child.kill('SIGTERM')
      const { code, output } = await worker!.exit
      expect(code).toBe(1)
      expect(output).toContain('could not stop within 10000 ms (a Redis command was never answered): exiting')
      expect(performance.now() - began).toBeLessThan(30_000)
    },
  )
})
