// Preloaded by `npm run bench:instructions -- --trace` (never otherwise): prints a line at each
// segment boundary of bench/instructions-client.ts (its calls of os.freemem()), so that V8's
// --trace-opt / --trace-deopt / --trace-gc lines can be told apart by segment.
import os from 'node:os'

const freemem = os.freemem.bind(os)
let marks = 0
os.freemem = (): number => {
  marks++
  process.stdout.write(`=== mark ${marks}\n`)
  return freemem()
}
