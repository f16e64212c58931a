// When a conversation's messages get a second pass (src/pagination/growth-watch.ts): when its newest
// message is dated within a minute of the read's start or later, the start being the service's
// `Date` header of the first response (this process's clock when there is none), or when a newest
// message's date cannot be read. The behaviour it serves is tested at the public API in
// moving-lists.test.ts ("a conversation that grows while its messages are read").
import { describe, expect, it, vi } from 'vitest'
import { ADDED_SLACK_MS, GrowthWatch } from '../../src/pagination/growth-watch.ts'

const DATE = 'Fri, 27 Nov 2026 14:00:00 GMT'
const START = Date.parse(DATE)
const iso = (ms: number): string => new Date(ms).toISOString()

function watch(dateHeader: string | undefined, now: number, newest: readonly (string | undefined)[]): boolean {
  const growth = new GrowthWatch()
  growth.response(() => dateHeader, now)
  for (const createdAt of newest) growth.page(createdAt)
  return growth.mayHaveGrown()
}

describe('GrowthWatch', () => {
  it('messages dated well before the read: one pass is enough', () => {
    expect(watch(DATE, START, [iso(START - ADDED_SLACK_MS - 1)])).toBe(false)
    expect(watch(DATE, START, ['2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z'])).toBe(false)
  })

  it('a newest message dated within the slack of the start, or after it: a second pass', () => {
    expect(watch(DATE, START, [iso(START - ADDED_SLACK_MS)])).toBe(true)
    expect(watch(DATE, START, ['2024-01-01T00:00:00.000Z', iso(START + 5_000)])).toBe(true)
  })

  it("the service's clock decides, not this process's: the first response's Date, later ones ignored", () => {
    const late = START + 3_600_000
    expect(watch(DATE, late, [iso(START + 1_000)])).toBe(true)
    const growth = new GrowthWatch()
    growth.response(() => DATE, START)
    let asked = false
    growth.response(() => ((asked = true), 'Fri, 27 Nov 2026 18:00:00 GMT'), START)
    growth.page(iso(START + 1_000))
    expect(growth.mayHaveGrown()).toBe(true)
    expect(asked).toBe(false)
  })

  it("without a readable Date, this process's clock at the first response", () => {
    expect(watch(undefined, START, [iso(START + 1_000)])).toBe(true)
    expect(watch('not a date', START, [iso(START - 2 * ADDED_SLACK_MS)])).toBe(false)
  })

  it.each(['America/New_York', 'Asia/Tokyo', 'UTC'])(
    'a created_at without a zone is UTC, whatever TZ (%s) the process runs under',
    (zone) => {
      vi.stubEnv('TZ', zone)
      expect(watch(DATE, START, ['2026-11-27T14:00:30'])).toBe(true)
      expect(watch(DATE, START, ['2026-11-27T12:00:00.000'])).toBe(false)
      expect(watch('Fri, 27 Nov 2026 14:00:00', START + 3_600_000, ['2026-11-27T14:00:30Z'])).toBe(false) // no GMT: not an HTTP date
    },
  )

  it('a newest message whose created_at cannot be read: a second pass; an empty page says nothing', () => {
    expect(watch(DATE, START, ['yesterday'])).toBe(true)
    expect(watch(DATE, START, [undefined])).toBe(false)
  })
})
