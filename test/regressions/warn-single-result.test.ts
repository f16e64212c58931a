// Fixed in 0.2 (found by the second test suite): responseValidation 'warn' has no effect on single-result calls (auth.issueToken,
// customerUsers.update): RequestPipeline#call passes no isFatal to checkBody, whose default
// (() => true) makes every issue fatal, so the call throws ResponseValidationError as under 'strict'.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { recordingLogger, startLoopback, type LoopbackServer } from '../helpers/loopback.ts'

let server: LoopbackServer
beforeAll(async () => {
  server = await startLoopback()
})
afterAll(() => server.close())

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.d2Fybi10b2tlbi1wYXlsb2Fk.c2lnLXdhcm4tdG9rZW4'

it("customerUsers.update under responseValidation 'warn' returns the body as sent (active: 1) and warns", async () => {
  const sent = { id: 'cu-1', external_id: 'ext-1', name: 'n', email: 'e@x.io', metadata: {}, active: 1, updated_at: 't' }
  server.respond(() => ({ body: sent }))
  const logger = recordingLogger()
  const client = new ChatServiceClient({
    baseUrl: server.origin,
    keyId: 'k',
    keySecret: 'ks_live_Q9vX3mR7pL2wT8nB5cY1',
    logger,
    responseValidation: 'warn',
  })
  try {
    expect(await client.customerUsers.update('cu-1', { name: 'n' })).toStrictEqual(sent)
    expect(logger.messages('warn').filter((m) => m.includes('customerUsers.update'))).toHaveLength(1)
  } finally {
    await client.close()
  }
})

it("auth.issueToken with per-call responseValidation 'warn' returns the body as sent (agent.active: 'yes') and warns", async () => {
  const sent = {
    token: TOKEN,
    user: { id: 'cu-1', externalId: 'ext-1', companyId: 'company-1', agentId: 'agent-2' },
    agent: { id: 'agent-2', name: 'Agent 2', active: 'yes' },
  }
  server.respond(() => ({ body: sent }))
  const logger = recordingLogger()
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: 'k', keySecret: 'ks_live_Q9vX3mR7pL2wT8nB5cY1', logger })
  try {
    expect(await client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2' }, { responseValidation: 'warn' })).toStrictEqual(sent)
    expect(logger.messages('warn').some((m) => m.includes('auth.issueToken') && m.includes('agent.active'))).toBe(true)
  } finally {
    await client.close()
  }
})
