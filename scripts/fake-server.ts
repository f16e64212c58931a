// Starts the embedded fake service in this process and prints one JSON line on stdout:
// { "url": "...", "keyId": "...", "keySecret": "..." }. Used by the stress and benchmark scripts,
// which run the client in another process so that the server's work and memory are not counted.
//   node scripts/fake-server.ts [--agents N] [--customer-users N] [--conversations N] [--messages N] [--latency-ms N] [--record-requests]
// Requests are not recorded unless --record-requests is given: a long benchmark must not keep
// every request in the server's memory.
import { parseArgs } from 'node:util'
import { createFakeChatService, generateDataset } from '../src/testing/index.ts'

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '20' },
    'customer-users': { type: 'string', default: '100' },
    conversations: { type: 'string', default: '10' },
    messages: { type: 'string', default: '100' },
    'latency-ms': { type: 'string', default: '0' },
    'record-requests': { type: 'boolean', default: false },
  },
})
const seed = generateDataset({
  seed: 1,
  agents: Number(values.agents),
  customerUsers: Number(values['customer-users']),
  conversations: Number(values.conversations),
  messages: Number(values.messages),
})
const key = seed.companies[0]?.keys[0]
if (key === undefined) throw new Error('no key in the generated dataset')
const latencyMs = Number(values['latency-ms'])
const fake = createFakeChatService({ seed, recordRequests: values['record-requests'], ...(latencyMs > 0 ? { latencyMs } : {}) })
const server = await fake.listen()
process.stdout.write(
  `${JSON.stringify({ url: server.url, keyId: key.keyId, keySecret: key.keySecret, conversationId: seed.companies[0]?.conversations?.[0]?.id })}\n`,
)
const stop = (): void => {
  void server.close().then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop) // the parent closing our stdin also stops us
process.stdin.resume()
