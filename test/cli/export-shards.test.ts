// `chat-service export --shard I/N` as a user runs it (`main`, the entry the bin uses, in this
// process, its usage errors too: the exit status 2 through the bin is commands-users.test.ts's; the
// fake in listen mode): shards whose files together are one export, and a new number
// of shards from the previous ones' checkpoints (--previous-checkpoint): none twice, none missing.
import { readFile, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { shardOf } from 'chat-service-sdk'
import { aDayPasses, exists, expectContent, lines, linesOf, readJson, useExportKit } from './export-kit.ts'

const kit = useExportKit()
const { serve, file, exportToEnd } = kit

describe('export --shard I/N: one export over N workers', { timeout: 90_000 }, () => {
  it("shards' files together hold every message once, each shard its own conversations; so do their nightly files", async () => {
    const service = await serve()
    const count = 3
    const outs = Array.from({ length: count }, (_, index) => file(`shard-${index}.jsonl`))
    const checkpoints = Array.from({ length: count }, (_, index) => file(`shard-${index}.checkpoint.json`))
    await Promise.all(
      outs.map((out, index) =>
        exportToEnd(service, ['--out', out, '--shard', `${index}/${count}`, '--checkpoint', checkpoints[index] ?? '']),
      ),
    )
    const all = lines(service)
    for (const [index, out] of outs.entries()) {
      const mine = service.fake.listConversations(service.company).filter((conversation) => shardOf(conversation.id, count) === index)
      expect(mine.length).toBeGreaterThan(0)
      await expectContent(out, lines(service, mine)) // its own conversations, in list order, nothing else
    }
    const together = await Promise.all(outs.map((out) => readFile(out, 'utf8')))
    expect(together.join('').split('\n').sort()).toEqual(all.split('\n').sort())

    const added = aDayPasses(service, 2)
    const nights = outs.map((out) => out.replace('.jsonl', '.night-2.jsonl'))
    await Promise.all(
      nights.map((out, index) =>
        exportToEnd(service, ['--out', out, '--shard', `${index}/${count}`, '--checkpoint', checkpoints[index] ?? '']),
      ),
    )
    const night = await Promise.all(nights.map((out) => readFile(out, 'utf8')))
    expect(night.join('').split('\n').sort()).toEqual(linesOf(service, added).split('\n').sort())
  })

  it('a state file of another shard is refused, saying how to go on', async () => {
    const service = await serve()
    const out = file('shard.jsonl')
    await exportToEnd(service, ['--out', out, '--shard', '1/3', '--max-items', '10'])
    const ran = await kit.exportRun(service, ['--out', out])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${out}.cursor is an unfinished export of shard 1/3, not all shards: finish it with --shard 1/3`)
    const checkpoint = file('shard.checkpoint.json')
    await exportToEnd(service, ['--out', file('n.jsonl'), '--checkpoint', checkpoint, '--shard', '0/2'])
    const other = await kit.exportRun(service, ['--out', file('n.jsonl'), '--checkpoint', checkpoint, '--shard', '1/2'])
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(`holds the checkpoint of shard 0/2, and this run is shard 1/2`)
  })

  it.each([['2/2'], ['1/0'], ['x'], ['1/70000']])('--shard %s: exit 2, nothing sent', async (shard) => {
    const service = await serve()
    const ran = await kit.exportRun(service, ['--out', file('x.jsonl'), '--shard', shard])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain('--shard must be I/N')
    expect(service.fake.requests).toHaveLength(0)
  })
})

describe('export --previous-checkpoint: a new number of shards', { timeout: 90_000 }, () => {
  /** Night 1 over three shards: their checkpoint files. */
  async function threeShards(service: Awaited<ReturnType<typeof serve>>): Promise<string[]> {
    const checkpoints = [0, 1, 2].map((index) => file(`shard-${index}-of-3.checkpoint.json`))
    await Promise.all(
      checkpoints.map((checkpoint, index) =>
        exportToEnd(service, ['--out', file(`night-1-${index}.jsonl`), '--shard', `${index}/3`, '--checkpoint', checkpoint]),
      ),
    )
    return checkpoints
  }

  it("from 3 shards to 2: each new shard starts from every previous shard's checkpoint, and the two files hold only what was added", async () => {
    const service = await serve()
    const previous = await threeShards(service)
    const added = aDayPasses(service, 2)
    const news = [0, 1].map((index) => file(`shard-${index}-of-2.checkpoint.json`))
    const outs = [0, 1].map((index) => file(`night-2-${index}.jsonl`))
    const runs = await Promise.all(
      [0, 1].map((index) =>
        exportToEnd(service, [
          '--out',
          outs[index] ?? '',
          '--shard',
          `${index}/2`,
          '--checkpoint',
          news[index] ?? '',
          ...previous.flatMap((path) => ['--previous-checkpoint', path]),
        ]),
      ),
    )
    const night2 = await Promise.all(outs.map((out) => readFile(out, 'utf8')))
    expect(night2.join('').split('\n').sort()).toEqual(linesOf(service, added).split('\n').sort())
    expect(runs[0]?.stderr).toContain('exporting the messages added since the previous checkpoints')
    expect(await readJson(news[1] ?? '')).toMatchObject({ shard: '1/2', run: null })
    // Night 3 goes on from the new files alone.
    const night3 = await Promise.all(
      [0, 1].map(async (index) => {
        const out = file(`night-3-${index}.jsonl`)
        await exportToEnd(service, ['--out', out, '--shard', `${index}/2`, '--checkpoint', news[index] ?? ''])
        return readFile(out, 'utf8')
      }),
    )
    expect(night3).toEqual(['', ''])
  })

  it.each([
    ['a missing shard', (previous: string[]) => previous.slice(0, 2), 'the files hold 2 of the 3 shards; 2/3 is missing'],
    ['the same shard twice', (previous: string[]) => [previous[0] ?? '', previous[0] ?? '', previous[1] ?? ''], 'are both shard 0/3'],
    ['a file that is not there', (previous: string[]) => [...previous, file('nope.json')], 'there is no such file'],
  ])('%s: exit 1 saying so, no file made', async (_, pick, message) => {
    const service = await serve()
    const previous = pick(await threeShards(service))
    const checkpoint = file('shard-0-of-2.checkpoint.json')
    const out = file('night-2-0.jsonl')
    const ran = await kit.exportRun(service, [
      '--out',
      out,
      '--shard',
      '0/2',
      '--checkpoint',
      checkpoint,
      ...previous.flatMap((path) => ['--previous-checkpoint', path]),
    ])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(message)
    expect(await exists(checkpoint)).toBe(false)
    expect(await exists(out)).toBe(false)
  })

  it('an unfinished previous shard is refused (finish it first); a shard count changed without --previous-checkpoint says how to do it', async () => {
    const service = await serve()
    const previous = await threeShards(service)
    // Shard 1's night stopped half way: its file says where that run writes.
    const state = (await readJson(previous[1] ?? '')) as Record<string, unknown>
    await writeFile(previous[1] ?? '', JSON.stringify({ ...state, run: { out: file('night-2-1.jsonl'), bytes: 0, written: 0 } }))
    const unfinished = await kit.exportRun(service, [
      '--out',
      file('x.jsonl'),
      '--shard',
      '0/2',
      '--checkpoint',
      file('new.json'),
      ...previous.flatMap((path) => ['--previous-checkpoint', path]),
    ])
    expect(unfinished.code).toBe(1)
    expect(unfinished.stderr).toContain(`--previous-checkpoint ${previous[1]} holds an unfinished run of shard 1/3`)
    const reused = await kit.exportRun(service, ['--out', file('y.jsonl'), '--shard', '0/2', '--checkpoint', previous[0] ?? ''])
    expect(reused.code).toBe(1)
    expect(reused.stderr).toContain(`holds the checkpoint of shard 0/3, and this run is shard 0/2: to change the number of shards`)
    expect(reused.stderr).toContain('--previous-checkpoint FILE')
  })
})
