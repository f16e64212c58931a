// msw mode as an SDK user meets it: what msw mode cannot see fails loudly, at once, with a message
// that says why; everything it can see is the truth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatServiceClient, InternalServerError } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'

const seed = generateDataset({ seed: 9, agents: 3, customerUsers: 25, conversations: 3, messages: 30 })
const { keyId, keySecret } = seed.companies[0]!.keys[0]!
const fake = createFakeChatService({ seed })
const network = createMswNetwork(createFakeHandlers(fake, 'https://chat.test'))
const client = new ChatServiceClient({ baseUrl: 'https://chat.test', keyId, keySecret, logLevel: 'off' })

beforeAll(() => {
  network.enable()
})
afterAll(async () => {
  await client.close()
  network.disable()
})

describe('msw mode through the SDK', () => {
  it('a customer-user filter is an error that points to listen mode, never the unfiltered list', async () => {
    fake.clearRequests()
    const failure = await client.customerUsers.list({ external_id: 'ext_00003' }).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(failure).toBeInstanceOf(InternalServerError)
    const error = failure as InternalServerError
    expect(error.status).toBe(501)
    expect(error.message).toContain('msw mode cannot see GET bodies')
    expect(error.message).toContain('filters (name, email, external_id)')
    expect(error.message).toContain('listen mode')
    expect(fake.requests).toHaveLength(1) // not retried: it would fail the same way every time
  })

  it('without filters, every customer user of the company, page by page', async () => {
    const ids: string[] = []
    for await (const user of client.customerUsers.list({ limit: 10 })) ids.push(user.id)
    expect(ids).toEqual(fake.listCustomerUsers('comp_1').map((user) => user.id))
  })

  it('a key secret of another length is an error, not the company’s data', async () => {
    const wrong = new ChatServiceClient({ baseUrl: 'https://chat.test', keyId, keySecret: `${keySecret}x`, logLevel: 'off' })
    await expect(wrong.agents.list()).rejects.toMatchObject({ status: 501, message: expect.stringContaining('listen mode') as unknown })
    await wrong.close()
  })
})
