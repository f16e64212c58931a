/**
 * Compression (issue 10), at a real loopback server: requests ask for gzip and br (not zstd: see
 * the first test); gzip, br and (sent anyway) zstd responses are decoded, error responses included (and still cut
 * at 64 KiB after decoding); `compression: false` asks for nothing; a caller's own undici
 * dispatcher gets decoding too; `maxResponseBytes` caps the DECODED size, so a compression bomb
 * (about 1 MiB of gzip, or 2 KiB of br, that inflates to 1 GiB) ends in ResponseValidationError
 * without the process's memory growing anywhere near the inflated size.
 *
 * Memory is measured in this process (the client and the server both run here; the server only
 * holds the compressed bytes): `process.memoryUsage()` is sampled every 5 ms while the call runs,
 * and the peak `rss` and `arrayBuffers` are compared with the values just before the call.
 */
import type { ServerResponse } from 'node:http'
import * as zlib from 'node:zlib'
import { Agent } from 'undici'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  BadRequestError,
  ChatServiceClient,
  InternalServerError,
  NotFoundError,
  ResponseValidationError,
  type ClientOptions,
} from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, tokenResponse } from '../helpers/fixtures.ts'
import { rejection, ZSTD, type Coding, type LoopbackServer, useLoopback } from '../helpers/loopback.ts'

const MiB = 1024 * 1024
const GiB = 1024 * MiB
const CODINGS: Coding[] = ZSTD ? ['gzip', 'br', 'zstd'] : ['gzip', 'br']

let server: LoopbackServer

useLoopback((started) => {
  server = started
})

function makeClient(extra: Partial<ClientOptions> = {}): ChatServiceClient {
  return new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, logLevel: 'off', ...extra })
}

/** A page of 100 agents with long names: a few hundred KB of JSON that compresses well. */
function bigPage(): Record<string, unknown> {
  const data = Array.from({ length: 100 }, (_, i) => ({ ...agent(i), name: `Agent ${i} `.repeat(300) }))
  return { data, pagination: { page: 1, limit: 100, total: 100, total_pages: 1 } }
}

/** The codings a request asked for, parsed from its accept-encoding header. */
function accepted(headers: Record<string, string | string[] | undefined>): string[] {
  const value = headers['accept-encoding']
  return typeof value === 'string' ? value.split(',').map((part) => part.trim().split(';')[0] ?? '') : []
}

describe('what requests ask for', () => {
  // Not zstd: Node's zstd decoder stops after the first frame of a multi-frame body, which would
  // cut a response short without an error (see ACCEPT_ENCODING in src/internal/resolved-options.ts). A zstd
  // body a server sends anyway is still decoded (below).
  it('every request asks for exactly gzip and br', async () => {
    server.respond((request) =>
      request.method === 'POST'
        ? { body: tokenResponse() }
        : { body: { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } } },
    )
    const client = makeClient()
    try {
      await client.agents.list()
      await client.auth.issueToken({ userId: 'ext-1' })
      await client.customerUsers.list({ external_id: 'x' })
      expect(server.arrivals).toHaveLength(3)
      for (const arrival of server.arrivals) {
        const codings = accepted(arrival.headers)
        expect(codings).toEqual(['gzip', 'br'])
      }
    } finally {
      await client.close()
    }
  })

  it('compression: false sends no accept-encoding at all, on every call, per-call headers included', async () => {
    server.respond(() => ({ body: { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } } }))
    const client = makeClient({ compression: false })
    try {
      await client.agents.list()
      await client.agents.list({}, { headers: { 'x-trace': '1' } })
      for (const arrival of server.arrivals) expect(arrival.headers['accept-encoding']).toBeUndefined()
    } finally {
      await client.close()
    }
  })

  it('accept-encoding cannot be set by hand (the compression option owns it)', () => {
    expect(() => makeClient({ headers: { 'Accept-Encoding': 'identity' } })).toThrow(/compression/)
  })
})

describe.each(CODINGS)('a %s response', (coding) => {
  it('is decoded: a big list page, and a token result', async () => {
    const page = bigPage()
    server.respond((request) =>
      request.method === 'POST'
        ? { body: tokenResponse(), encoding: coding }
        : { body: page, encoding: coding, headers: { 'x-request-id': 'r1' } },
    )
    const client = makeClient()
    try {
      const { data, response } = await client.agents.list({ limit: 100 }).withResponse()
      expect(data.data).toStrictEqual(page.data)
      expect(response.requestId).toBe('r1')
      expect(await client.auth.issueToken({ userId: 'ext-1' })).toStrictEqual(tokenResponse())
    } finally {
      await client.close()
    }
  })

  it('is decoded through a dispatcher the caller passed (an undici Agent)', async () => {
    const page = bigPage()
    server.respond(() => ({ body: page, encoding: coding }))
    const dispatcher = new Agent()
    const client = makeClient({ dispatcher })
    try {
      expect((await client.agents.list({ limit: 100 })).data).toStrictEqual(page.data)
      expect(accepted(server.arrivals[0]!.headers)).toEqual(['gzip', 'br'])
    } finally {
      await client.close()
      await dispatcher.close()
    }
  })

  it('an error response is decoded too: APIError.body is the JSON the service sent', async () => {
    const client = makeClient()
    try {
      server.respond(() => ({ status: 404, body: { error: { message: `no such user (${coding})` } }, encoding: coding }))
      const notFound = await rejection(client.customerUsers.update('cu-x', { name: 'n' }))
      expect(notFound).toBeInstanceOf(NotFoundError)
      expect((notFound as NotFoundError).body).toStrictEqual({ error: { message: `no such user (${coding})` } })
      expect((notFound as Error).message).toContain(`no such user (${coding})`)
      server.respond(() => ({ status: 400, body: { error: 'limit too big' }, encoding: coding }))
      const bad = await rejection(client.agents.list())
      expect(bad).toBeInstanceOf(BadRequestError)
      expect((bad as BadRequestError).body).toStrictEqual({ error: 'limit too big' })
    } finally {
      await client.close()
    }
  })

  it('an error body over 64 KiB after decoding is cut there', async () => {
    const huge = { error: 'x'.repeat(2 * MiB) }
    server.respond(() => ({ status: 500, body: huge, encoding: coding }))
    const client = makeClient()
    try {
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(InternalServerError)
      const body = (error as InternalServerError).body
      expect(typeof body).toBe('string')
      expect(body as string).toMatch(/^\{"error":"x+/)
      expect(Buffer.byteLength(body as string)).toBeGreaterThanOrEqual(64 * 1024)
      expect(Buffer.byteLength(body as string)).toBeLessThan(64 * 1024 + 200)
      expect(server.arrivals).toHaveLength(1)
    } finally {
      await client.close()
    }
  })

  it('maxResponseBytes counts decoded bytes: 1.5 MiB of JSON in a few KB is refused at 1 MiB, 0.75 MiB is read', async () => {
    const ofSize = (bytes: number): Record<string, unknown> => ({
      data: [{ ...agent(1), name: ' '.repeat(bytes) }],
      pagination: { page: 1, limit: 20, total: 1, total_pages: 1 },
    })
    // A cap of 1 MiB, not the default 8 MiB: what is counted is the subject, not the size (9 MiB
    // and 5 MiB in three codings took some 0.6 s more of CPU for the same proof).
    const client = makeClient({ maxResponseBytes: MiB })
    try {
      server.respond(() => ({ body: ofSize(0.75 * MiB), encoding: coding }))
      expect((await client.agents.list()).data[0]?.name).toHaveLength(0.75 * MiB)
      server.respond(() => ({ body: ofSize(1.5 * MiB), encoding: coding }))
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(ResponseValidationError)
      expect((error as ResponseValidationError).issues[0]?.code).toBe('too_big')
    } finally {
      await client.close()
    }
  })
})

describe('compression bombs', () => {
  /** 1 GiB of zeros as gzip: one 64 MiB member (about 64 KB) sent 16 times (gzip allows concatenated members). */
  let gzipMember: Buffer
  /** 1 GiB of zeros as one brotli stream (about 2 KB). */
  let brotliBomb: Buffer

  beforeAll(async () => {
    const zeros = Buffer.alloc(64 * MiB)
    gzipMember = zlib.gzipSync(zeros, { level: 9 })
    const compressor = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
    const chunks: Buffer[] = []
    compressor.on('data', (chunk: Buffer) => chunks.push(chunk))
    const ended = new Promise((resolve) => compressor.on('end', resolve))
    for (let i = 0; i < GiB / zeros.length; i++) {
      if (!compressor.write(zeros)) await new Promise((resolve) => compressor.once('drain', resolve))
    }
    compressor.end()
    await ended
    brotliBomb = Buffer.concat(chunks)
  }, 60_000)

  /** Writes the gzip bomb with back-pressure, stopping when the client goes away. */
  async function writeGzipBomb(res: ServerResponse, status: number): Promise<void> {
    res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    for (let i = 0; i < GiB / (64 * MiB) && !res.destroyed; i++) {
      if (!res.write(gzipMember)) {
        await new Promise<void>((resolve) => {
          res.once('drain', resolve)
          res.once('close', resolve)
        })
      }
    }
    res.end()
  }

  /** Runs `call`, sampling memory every 5 ms; returns its rejection and the peak growth of rss and arrayBuffers. */
  async function measured(call: () => PromiseLike<unknown>): Promise<{ error: unknown; rssGrowth: number; arrayBuffersGrowth: number }> {
    const before = process.memoryUsage()
    let peak = before
    const sample = (): void => {
      const now = process.memoryUsage()
      peak = { ...peak, rss: Math.max(peak.rss, now.rss), arrayBuffers: Math.max(peak.arrayBuffers, now.arrayBuffers) }
    }
    const timer = setInterval(sample, 5)
    try {
      const error = await rejection(call())
      sample()
      return { error, rssGrowth: peak.rss - before.rss, arrayBuffersGrowth: peak.arrayBuffers - before.arrayBuffers }
    } finally {
      clearInterval(timer)
    }
  }

  it('is about 1 MiB of gzip and 2 KiB of br for 1 GiB of content', () => {
    expect(gzipMember.length * 16).toBeLessThan(2 * MiB)
    expect(zlib.gunzipSync(gzipMember).length * 16).toBe(GiB)
    expect(brotliBomb.length).toBeLessThan(64 * 1024)
  })

  it('gzip, maxResponseBytes 8 MiB: ResponseValidationError (too big), and memory grows by far less than 1 GiB', async () => {
    server.respond(() => ({ write: (res) => writeGzipBomb(res, 200) }))
    const client = makeClient({ maxResponseBytes: 8 * MiB })
    try {
      const { error, rssGrowth, arrayBuffersGrowth } = await measured(() => client.agents.list())
      expect(rssGrowth).toBeLessThan(256 * MiB)
      expect(arrayBuffersGrowth).toBeLessThan(256 * MiB)
      expect(error).toBeInstanceOf(ResponseValidationError)
      expect((error as ResponseValidationError).issues[0]?.code).toBe('too_big')
      expect((error as Error).message).toMatch(/maxResponseBytes/)
      expect(server.arrivals).toHaveLength(1) // too big is final: not retried
    } finally {
      await client.close()
    }
  })

  it('br, maxResponseBytes 8 MiB: the same', async () => {
    server.respond(() => ({
      write: (res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br', 'content-length': String(brotliBomb.length) })
        res.end(brotliBomb)
      },
    }))
    const client = makeClient({ maxResponseBytes: 8 * MiB })
    try {
      const { error, rssGrowth, arrayBuffersGrowth } = await measured(() => client.conversations.list())
      expect(rssGrowth).toBeLessThan(256 * MiB)
      expect(arrayBuffersGrowth).toBeLessThan(256 * MiB)
      expect(error).toBeInstanceOf(ResponseValidationError)
      expect((error as ResponseValidationError).issues[0]?.code).toBe('too_big')
    } finally {
      await client.close()
    }
  })

  it('as an error response (500): the body is cut at 64 KiB and memory stays low', async () => {
    server.respond(() => ({ write: (res) => writeGzipBomb(res, 500) }))
    const client = makeClient()
    try {
      const { error, rssGrowth, arrayBuffersGrowth } = await measured(() => client.agents.list())
      expect(rssGrowth).toBeLessThan(256 * MiB)
      expect(arrayBuffersGrowth).toBeLessThan(256 * MiB)
      expect(error).toBeInstanceOf(InternalServerError)
      expect(Buffer.byteLength(String((error as InternalServerError).body))).toBeLessThan(64 * 1024 + 200)
    } finally {
      await client.close()
    }
  })
})

// The SDK decodes bodies itself (src/internal/decoding.ts) rather than with undici's experimental
// decompress interceptor, which printed an ExperimentalWarning (silencing it took a patch of the
// global process.emitWarning).
describe('decoding, the SDK’s own', () => {
  function respondRaw(body: Buffer, contentEncoding: string, status = 200): void {
    server.respond(() => ({
      write: (res: ServerResponse) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'content-encoding': contentEncoding,
          'content-length': String(body.length),
        })
        res.end(body)
      },
    }))
  }
  const page = { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } }
  const json = Buffer.from(JSON.stringify(page))

  it('emits no process warning and leaves process.emitWarning as it was', async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error): void => {
      warnings.push(warning)
    }
    process.on('warning', onWarning)
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
    const emitWarning = process.emitWarning
    const client = makeClient()
    try {
      respondRaw(zlib.gzipSync(json), 'gzip')
      await client.agents.list()
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.map((warning) => warning.message)).toEqual([])
      // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
      expect(process.emitWarning).toBe(emitWarning)
    } finally {
      process.off('warning', onWarning)
      await client.close()
    }
  })

  it('decodes deflate, and codings applied one over another (gzip, then br), in reverse order', async () => {
    const client = makeClient()
    try {
      respondRaw(zlib.deflateSync(json), 'deflate')
      expect((await client.agents.list()).data).toStrictEqual(page.data)
      respondRaw(zlib.brotliCompressSync(zlib.gzipSync(json)), 'gzip, br')
      const { data, response } = await client.agents.list().withResponse()
      expect(data.data).toStrictEqual(page.data)
      // The decoded body is what is described: the coding and the encoded length are gone.
      expect(response.headers['content-encoding']).toBeUndefined()
      expect(response.headers['content-length']).toBeUndefined()
    } finally {
      await client.close()
    }
  })

  it('hands a body with a coding it does not decode over as it came, content-encoding kept (here: a ResponseValidationError)', async () => {
    const client = makeClient()
    try {
      respondRaw(Buffer.from([0x1f, 0x9d, 0x90, 0x7b, 0x22]), 'compress') // LZW bytes: zlib cannot read them
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(ResponseValidationError)
      expect((error as ResponseValidationError).headers['content-encoding']).toBe('compress')
    } finally {
      await client.close()
    }
  })

  it('a corrupt gzip body is a connection error that says why, and is retried like one', async () => {
    const client = makeClient({ maxRetries: 1 })
    try {
      respondRaw(Buffer.concat([zlib.gzipSync(json).subarray(0, 12), Buffer.from('not gzip at all')]), 'gzip')
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(APIConnectionError)
      expect((error as APIConnectionError).message).toMatch(/header|check|invalid|incorrect/i)
      expect(server.arrivals).toHaveLength(2)
    } finally {
      await client.close()
    }
  })

  it('more than 5 codings on one response are refused, not decoded', async () => {
    const client = makeClient()
    try {
      respondRaw(json, 'gzip, gzip, gzip, gzip, gzip, gzip')
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(APIConnectionError)
      expect((error as APIConnectionError).message).toContain('Too many content codings')
    } finally {
      await client.close()
    }
  })
})
