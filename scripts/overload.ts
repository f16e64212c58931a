// Overload script (issue 19): how much load does a client under overload put on the service?
// Not part of the tests (it prints figures; the test in test/hostile/overload.test.ts asserts
// the counts in a deterministic scenario). A loopback node:http server answers every request after
// `--delay` ms and counts what it receives; one client with `--connections` sockets makes `--calls`
// calls at once, with a per-attempt `--timeout` shorter than the wait in the pool's queue
// (about calls / connections × delay) and the default retries. Prints the requests the server
// received per call (the amplification), and how the calls ended.
//   npm run overload [-- --calls 1000 --connections 64 --delay 50 --timeout 400 --max-retries 2]
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { ChatServiceClient, ChatServiceError } from '../src/index.ts'

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '64' },
    delay: { type: 'string', default: '50' },
    timeout: { type: 'string', default: '400' },
    'max-retries': { type: 'string', default: '2' },
  },
})
const calls = Number(values.calls)
const connections = Number(values.connections)
const delay = Number(values.delay)
const timeout = Number(values.timeout)
const maxRetries = Number(values['max-retries'])

let received = 0
let answered = 0
let inFlight = 0
let peak = 0
const page = JSON.stringify({
  data: [{ id: 'agent-1', name: 'Agent 1', active: true, created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z' }],
  pagination: { page: 1, limit: 20, total: 1, total_pages: 1 },
})
const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    received++
    peak = Math.max(peak, ++inFlight)
    setTimeout(() => {
      inFlight--
      if (response.destroyed) return
      answered++
      response.writeHead(200, { 'content-type': 'application/json' }).end(page)
    }, delay)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1')
await once(server, 'listening')
const { port } = server.address() as AddressInfo

const client = new ChatServiceClient({
  baseUrl: `http://127.0.0.1:${port}`,
  keyId: 'key-id',
  keySecret: 'key-secret-overload-0123456789',
  connections,
  timeout,
  maxRetries,
  logLevel: 'off',
})
const started = performance.now()
const results = await Promise.allSettled(Array.from({ length: calls }, () => client.agents.list()))
const elapsed = performance.now() - started
await client.close()
server.closeAllConnections()
server.close()

const failures = new Map<string, number>()
for (const result of results) {
  if (result.status === 'fulfilled') continue
  const error = result.reason as unknown
  const kind = error instanceof ChatServiceError ? `${error.name}: ${error.message.replace(/\d+/g, 'N').slice(0, 110)}` : String(error)
  failures.set(kind, (failures.get(kind) ?? 0) + 1)
}
const ok = results.filter((result) => result.status === 'fulfilled').length
console.log(`${calls} calls, connections ${connections}, server delay ${delay} ms, timeout ${timeout} ms, maxRetries ${maxRetries}`)
console.log(`queue wait for the last call without retries: about ${Math.round((calls / connections) * delay)} ms`)
console.log(
  `server received ${received} requests (${answered} answered, ${received - answered} abandoned by the client; at most ${peak} at once)`,
)
console.log(`amplification: ${(received / calls).toFixed(3)} requests per call`)
console.log(`${ok} calls succeeded, ${calls - ok} failed, in ${elapsed.toFixed(0)} ms`)
for (const [kind, count] of failures) console.log(`  ${count} × ${kind}`)
