// VERSION is the package's version, and it is what the user-agent sends (issue 6, API stability).
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { expect, it } from 'vitest'
import { ChatServiceClient, VERSION } from 'chat-service-sdk'

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }

it('VERSION equals package.json version', () => {
  expect(VERSION).toBe(pkg.version)
})

it('the user-agent sent at the wire names VERSION and the Node version', async () => {
  let userAgent: string | undefined
  const server = createServer((req, res) => {
    userAgent = req.headers['user-agent']
    req.resume()
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  const client = new ChatServiceClient({ baseUrl: `http://127.0.0.1:${port}`, keyId: 'k', keySecret: 's' })
  try {
    await client.agents.list()
  } finally {
    await client.close()
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve()
      }),
    )
  }
  expect(userAgent).toBe(`chat-service-sdk/${pkg.version} node/${process.versions.node}`)
})
