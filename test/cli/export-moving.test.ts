// `chat-service export` while the company's data changes under it (issue 28's promise, at the
// command a user runs): a message deleted in a long conversation after the run read its first page
// must not take the message that slides into its place with it. The core tests hold the SDK's
// listings to this (test/core/moving-lists.test.ts); these hold the command's files to it, runs
// through `main` in this process (export-kit.ts), the fake in listen mode moving its lists itself
// (`fake.moveList`) when the run asks for a page.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { expectContent, lines, useExportKit, type Service } from './export-kit.ts'

const kit = useExportKit()
const { serve, file, exportToEnd } = kit

/**
 * Makes the conversation with the most messages 150 long (the command reads 100 a page), and has
 * the fake delete its 5th message when the run asks for its second page. Returns every line a run
 * must write: the company as it is before the run, the deleted message included (it was read).
 */
function deleteAfterFirstPage(service: Service): { before: string; conversation: string } {
  const { fake, company } = service
  const longest = fake
    .listConversations(company)
    .map((conversation) => ({ id: conversation.id, size: fake.listMessages(company, conversation.id).length }))
    .reduce((a, b) => (b.size > a.size ? b : a))
  if (longest.size < 150) fake.appendMessages(company, longest.id, 150 - longest.size)
  const before = lines(service)
  fake.moveList({ list: 'messages', conversationId: longest.id, when: { page: 2 }, delete: { at: 4 } })
  return { before, conversation: longest.id }
}

describe('export while a conversation loses a message', { timeout: 60_000 }, () => {
  it('without --checkpoint: every message once, the 101st of the shrunk conversation too', async () => {
    const service = await serve()
    const { before, conversation } = deleteAfterFirstPage(service)
    const out = file('messages.jsonl')
    await exportToEnd(service, ['--out', out])
    await expectContent(out, before)
    // The move fired: the conversation is one message shorter than what was written of it.
    const written = (await readFile(out, 'utf8')).split('\n').filter((line) => line.includes(`"conversation_id":"${conversation}"`))
    expect(written).toHaveLength(150)
    expect(service.fake.listMessages(service.company, conversation)).toHaveLength(149)
  })

  it('--checkpoint: night 1 writes every message once; night 2 writes nothing and counts the conversation unchanged', async () => {
    const service = await serve()
    const { before } = deleteAfterFirstPage(service)
    const checkpoint = file('messages.checkpoint.json')
    const night1 = file('night-1.jsonl')
    await exportToEnd(service, ['--out', night1, '--checkpoint', checkpoint])
    await expectContent(night1, before)

    const night2 = file('night-2.jsonl')
    const second = await exportToEnd(service, ['--out', night2, '--checkpoint', checkpoint])
    await expectContent(night2, '')
    const conversations = service.fake.listConversations(service.company).length
    expect(second.stderr).toContain(`conversations: 0 new, 0 grown, ${conversations} unchanged, 0 rewound, 0 deleted`)
  })
})
