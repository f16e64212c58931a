// Writes every message of every conversation as JSON Lines (one message per line, oldest first
// within each conversation), to a file or stdout; progress goes to stderr.
//   npm run export-messages -- messages.jsonl
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import type { Writable } from 'node:stream'
import { connect } from './connect.ts'

const target = process.argv[2]
const out: Writable = target === undefined || target === '-' ? process.stdout : createWriteStream(target)
const { client, description, close } = await connect()
process.stderr.write(`Exporting from ${description}\n`)

let conversations = 0
let messages = 0
try {
  for await (const conversation of client.conversations.list({ limit: 100 })) {
    conversations++
    for await (const message of client.conversations.messages.list(conversation.id, { limit: 100 }, { prefetch: 2 })) {
      messages++
      if (!out.write(`${JSON.stringify(message)}\n`)) await once(out, 'drain')
    }
    process.stderr.write(`\rconversations: ${conversations}, messages: ${messages}`)
  }
  process.stderr.write(
    `\nexported ${messages} messages of ${conversations} conversations${target === undefined || target === '-' ? '' : ` to ${target}`}\n`,
  )
} catch (error) {
  process.stderr.write(`\nexport failed: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
} finally {
  if (out !== process.stdout) {
    out.end()
    await once(out, 'finish')
  }
  await close()
}
