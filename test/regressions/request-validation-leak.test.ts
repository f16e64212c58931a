// Fixed in 0.2 (found by the second test suite): RequestValidationError messages are not redacted. A key secret (or an issued
// token) that ends up as an object KEY in the arguments is echoed in the message through zod's
// "Unrecognized key" text or through the issue path (formatIssues joins path segments).
import { inspect } from 'node:util'
import { expect, it } from 'vitest'
import { ChatServiceClient, RequestValidationError } from 'chat-service-sdk'

const SECRET = 'ks_live_Q9vX3mR7pL2wT8nB5cY1'

it.each([
  ['an unknown params key', (c: ChatServiceClient) => c.agents.list({ [SECRET]: 1 } as never)],
  ['an unknown options key', (c: ChatServiceClient) => c.agents.list({}, { [SECRET]: 1 } as never)],
  ['a metadata key with an invalid value', (c: ChatServiceClient) => c.customerUsers.update('cu-1', { metadata: { [SECRET]: undefined } })],
])('%s: the RequestValidationError does not show the key secret', async (_name, call) => {
  const client = new ChatServiceClient({ baseUrl: 'http://127.0.0.1:9', keyId: 'k', keySecret: SECRET, logLevel: 'off' })
  try {
    const error = await Promise.resolve(call(client)).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(RequestValidationError)
    for (const text of [String(error), inspect(error, { showHidden: true, depth: 10 }), JSON.stringify(error)])
      expect(text).not.toContain(SECRET)
  } finally {
    await client.close()
  }
})
