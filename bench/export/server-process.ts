// Child process of the export benchmark: builds the dataset, checks the lean server's pages byte for
// byte against the fake's own listen() mode, then starts the export server and, in front of it, the
// emulated link. With --grow-fraction it also makes night 2 of the nightly benchmark (the dataset
// after the fake's appendMessages on that share of the conversations), checks it against the fake
// the same way, and serves it after POST /__bench/night/2. Prints one JSON line (ExportServerInfo)
// and serves until SIGTERM or stdin closes. Started through spawnExportServer()
// (bench/export/control.ts), never by hand.
//   node bench/export/server-process.ts --conversations N --messages N --latency-ms N --link-mbps N --link-rtt-ms N [--grow-fraction F --grow-max-added N]
import { request } from 'node:http'
import { parseArgs } from 'node:util'
import { buildExportDataset, type ExportDataset, type GrownNight, type NightView } from './dataset.ts'
import { startLinkProxy } from './link-proxy.ts'
import { startExportServer } from './server.ts'
import type { ExportServerInfo } from './control.ts'

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '2000' },
    messages: { type: 'string', default: '200000' },
    'latency-ms': { type: 'string', default: '5' },
    'link-mbps': { type: 'string', default: '50' },
    'link-rtt-ms': { type: 'string', default: '20' },
    'grow-fraction': { type: 'string' },
    'grow-max-added': { type: 'string', default: '5' },
  },
})
const started = performance.now()
const data = buildExportDataset({ conversations: Number(values.conversations), messages: Number(values.messages) })
await checkAgainstFake(data, data.pathsAtLimit100())
let night2: GrownNight | undefined
if (values['grow-fraction'] !== undefined) {
  night2 = data.grow({ fraction: Number(values['grow-fraction']), maxAdded: Number(values['grow-max-added']), seed: 2 })
  // The fake now holds night 2: its changed pages must be what the fake serves.
  await checkAgainstFake(night2, night2.changedPaths(), data)
}
const link = { mbps: Number(values['link-mbps']), rttMs: Number(values['link-rtt-ms']) }
const holder: { proxy?: Awaited<ReturnType<typeof startLinkProxy>> } = {}
const server = await startExportServer(data, {
  latencyMs: Number(values['latency-ms']),
  extraStats: () => ({ link: holder.proxy?.stats() }),
  extraReset: () => holder.proxy?.reset(),
  night2,
})
const target = new URL(server.url)
const proxy = (holder.proxy = await startLinkProxy({
  targetHost: target.hostname,
  targetPort: Number(target.port),
  bitsPerSecond: link.mbps * 1e6,
  oneWayDelayMs: link.rttMs / 2,
}))
const info: ExportServerInfo = {
  url: server.url,
  linkUrl: proxy.url,
  keyId: data.keyId,
  keySecret: data.keySecret,
  conversationId: '',
  expected: data.expected,
  latencyMs: Number(values['latency-ms']),
  link,
  startUpMs: performance.now() - started,
  ...(night2 === undefined ? {} : { nightly: night2.expected }),
}
process.stdout.write(`${JSON.stringify(info)}\n`)
const stop = (): void => {
  void Promise.all([server.close(), proxy.close()]).then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.resume()

/** The lean server must serve what the fake serves: compares `paths` (a sample of them when there are many, and two other page sizes) byte for byte. */
async function checkAgainstFake(view: NightView, paths: readonly string[], dataset: ExportDataset = view as ExportDataset): Promise<void> {
  const fakeServer = await dataset.fake.listen()
  try {
    const sample =
      paths.length <= 500
        ? [...paths]
        : [paths[0]!, paths[1]!, paths[paths.length - 1]!, paths[Math.floor(paths.length / 2)]!, paths.at(-2)!]
    sample.push('/rest/v1/conversations?page=2&limit=7', `${paths.at(-1)!.split('?')[0]!}?page=1&limit=3`)
    for (const path of sample) {
      // node:http, not fetch: fetch refuses a body on GET.
      const fakeBody = await getWithBody(`${fakeServer.url}${path}`, JSON.stringify({ keyId: dataset.keyId, keySecret: dataset.keySecret }))
      const url = new URL(path, 'http://x')
      const ours = view.render(url.pathname, url.searchParams)
      if (fakeBody.status !== ours.status || fakeBody.body !== ours.body) {
        throw new Error(
          `export server: ${path} differs from the fake (${fakeBody.status} vs ${ours.status}): the fake may have changed its output`,
        )
      }
    }
  } finally {
    await fakeServer.close()
  }
}

function getWithBody(url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') })
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
