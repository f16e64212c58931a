// Prints the size of the built ESM bundles and fails when the main one is over its budget.
// Budget: 256 KiB unminified for dist/index.js (the SDK without its two dependencies, comments
// included). It was 49 KiB at 0.1.0, 104 KiB (29 KiB gzip) at 0.2.0, which added listAll, typed
// metadata and the request pipeline, and 160 KiB (44 KiB gzip) during 0.3, which added listNew and
// its checkpoints, the paging rules, shards, the composed transport with deadlines and the shared
// 429 pause, and the Redactor's canonical (decoded) matching; 193 KiB (53 KiB gzip) once 0.3 added
// rateLimitStore, the redirect and overload guards, per-user metadata policies and the columnar
// checkpoint. The budget is there to catch a
// dependency bundled by mistake (zod alone is over 200 KiB, undici over 600 KiB), not to ration
// features. Gzip size is printed for reference.
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'

const BUDGET_BYTES = 256 * 1024
const files = ['dist/index.js', 'dist/testing/index.js']
let over = false
for (const file of files) {
  const bytes = readFileSync(file)
  const line = `${file}: ${(bytes.length / 1024).toFixed(1)} KiB (${(gzipSync(bytes).length / 1024).toFixed(1)} KiB gzip)`
  if (file === 'dist/index.js') {
    const ok = bytes.length <= BUDGET_BYTES
    over ||= !ok
    console.log(`${line}; budget ${BUDGET_BYTES / 1024} KiB: ${ok ? 'ok' : 'OVER BUDGET'}`)
  } else {
    console.log(line)
  }
}
process.exitCode = over ? 1 : 0
