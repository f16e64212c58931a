// Keep-alive at the wire: GET requests carry a body (the credentials), and undici would close the
// connection after each one unless told otherwise (then these 8 calls would open 8 connections).
// Sequential calls must reuse their connections; undici's pool may alternate between two.
import { createServer } from 'node:http'
import { expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'

it('sequential GET calls (with bodies) and PUT calls reuse keep-alive connections', async () => {
  let connections = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      if (req.method === 'PUT') {
        res.end(JSON.stringify({ id: 'u', external_id: 'e', name: 'n', email: null, metadata: {}, active: true, updated_at: 't' }))
      } else {
        res.end(JSON.stringify({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } }))
      }
    })
  })
  server.on('connection', () => {
    connections++
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const client = new ChatServiceClient({
    baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    keyId: 'k',
    keySecret: 's',
  })
  try {
    for (let i = 0; i < 5; i++) await client.agents.list()
    await client.customerUsers.list({ external_id: 'e' })
    await client.customerUsers.update('u', { name: 'n' })
    await client.conversations.list()
  } finally {
    await client.close()
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve()
      }),
    )
  }
  expect(connections).toBeLessThanOrEqual(2)
})
