// What the de-duplication of a whole-list listing holds (issue 28): the ids it listed, one entry
// each, for as long as the listing runs. Feeds 1,000,000 items (100 a page) through the scan every
// listing uses (src/pagination/list-scan.ts) and prints the heap it retains per million items, for
// ids of 14 and of 36 characters (a UUID). Run with --expose-gc (npm run bench:moving-lists does).
import { ListScan, type FetchedPage } from '../src/pagination/list-scan.ts'

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

const ITEMS = 1_000_000
const LIMIT = 100

function retained(idLength: number): number {
  gc?.()
  const before = process.memoryUsage().heapUsed
  const scan = new ListScan({ unstable: () => new Error('unstable') })
  const pages = ITEMS / LIMIT
  for (let page = 1; page <= pages; page++) {
    const data = Array.from({ length: LIMIT }, (_, i) => {
      const n = (page - 1) * LIMIT + i
      // A fresh string per id, as JSON.parse makes them (not a literal the engine shares).
      return { id: `${n.toString(36)}${'x'.repeat(Math.max(0, idLength - n.toString(36).length))}`.split('').join('') }
    })
    const fetched: FetchedPage = {
      body: { data, pagination: { page, limit: LIMIT, total: ITEMS, total_pages: pages } },
      response: { status: 200, headers: {}, requestId: undefined },
      invalid: () => {
        throw new Error('invalid')
      },
    }
    scan.next()
    scan.accept(fetched, scan.clock)
  }
  gc?.()
  const after = process.memoryUsage().heapUsed
  if (!scan.done || !scan.has('0'.padEnd(idLength, 'x'))) throw new Error('the scan did not take every page')
  return after - before
}

for (const length of [14, 36]) {
  const bytes = retained(length)
  console.log(
    `ids of ${length} characters: ${(bytes / 1e6).toFixed(1)} MB per million items listed (${(bytes / ITEMS).toFixed(1)} bytes each)`,
  )
}
