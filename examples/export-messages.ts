// Exports every message of every conversation as JSON Lines: the package's `chat-service export`
// command (src/cli/export.ts), run in this process. The repository keeps this example so that
// `npm run export-messages` works on a fresh clone: without CHAT_SERVICE_BASE_URL,
// CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET it runs against the embedded fake.
//
//   npm run export-messages -- messages.jsonl                  # every message; resumable (messages.jsonl.cursor)
//   npm run export-messages -- night.jsonl --checkpoint cp.json   # only what is new since cp.json
//
// After the output file, any option of `chat-service export` (`--shard I/N`, `--concurrency N`,
// `--max-items N`, ...). Ctrl-C, SIGTERM or a crash, then the same command, resumes with no gap and
// no duplicate line; exit status 0, 1, 2, 130 or 143 as the command's. What the command does is
// in docs/command.md.
import { main } from '../src/cli/main.ts'
import { serviceEnvironment } from './connect.ts'

const [output = 'messages.jsonl', ...options] = process.argv.slice(2)
const service = await serviceEnvironment()
process.stderr.write(`Exporting from ${service.description}\n`)
Object.assign(process.env, service.env)
try {
  process.exitCode = await main(['export', '--out', output, ...options])
} finally {
  await service.close()
}
