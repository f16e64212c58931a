// Child process: the embedded fake service (chat-service-sdk/testing, the BUILT package) on
// 127.0.0.1. Prints one JSON line { url, keyId, keySecret, conversationId } and serves until
// SIGTERM or until its parent closes stdin. Requests are not recorded (a long run would keep every
// request in memory). Started through spawnFake(), never by hand.
//   node bench/fake-process.ts [--agents N] [--customer-users N] [--conversations N] [--messages N] [--latency-ms N]
import { parseArgs } from 'node:util'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '20' },
    'customer-users': { type: 'string', default: '100' },
    conversations: { type: 'string', default: '10' },
    messages: { type: 'string', default: '100' },
    'latency-ms': { type: 'string', default: '0' },
  },
})
const seed = generateDataset({
  seed: 1,
  agents: Number(values.agents),
  customerUsers: Number(values['customer-users']),
  conversations: Number(values.conversations),
  messages: Number(values.messages),
})
const company = seed.companies[0]
const key = company?.keys[0]
if (key === undefined) throw new Error('no key in the generated dataset')
const latencyMs = Number(values['latency-ms'])
// compression: false keeps the per-call comparison with the floor (raw undici, no decoding) fair.
const fake = createFakeChatService({ seed, recordRequests: false, compression: false, ...(latencyMs > 0 ? { latencyMs } : {}) })
const server = await fake.listen()
process.stdout.write(
  `${JSON.stringify({ url: server.url, keyId: key.keyId, keySecret: key.keySecret, conversationId: company?.conversations?.[0]?.id })}\n`,
)
const stop = (): void => {
  void server.close().then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.resume()
