// Prints the size of the built ESM bundles and of the package as npm would publish it, and fails
// when either is over its budget.
//
// dist/index.js: 256 KiB unminified (the SDK without its two dependencies, comments included). It
// was 49 KiB at 0.1.0, 104 KiB (29 KiB gzip) at 0.2.0, which added listAll, typed metadata and the
// request pipeline, and 160 KiB (44 KiB gzip) during 0.3, which added listNew and its checkpoints,
// the paging rules, shards, the composed transport with deadlines and the shared 429 pause, and the
// Redactor's canonical (decoded) matching; 193 KiB (53 KiB gzip) once 0.3 added rateLimitStore, the
// redirect and overload guards, per-user metadata policies and the columnar checkpoint; 257 KiB
// (71 KiB gzip) once 0.4 added pacing (src/internal/rate-limit/), the scan that reads lists that
// move (src/pagination/list-scan.ts), deprecation notices and the option table, when the budget
// went from 256 to 320 KiB. The budget is there to catch a dependency bundled by mistake (zod alone
// is over 200 KiB, undici over 600 KiB), not to ration features. Gzip size is printed for reference.
//
// The package unpacked (`npm pack --dry-run --json`, `unpackedSize`: every file `files` lets in):
// 1.5 MB (1,500,000 bytes, npm's unit), what `npm install` puts on every user's disk. 0.3.0 shipped
// 3.0 MB, 61 % of it source maps carrying a copy of the sources; without those copies (the SDK's
// maps still map stack traces to src/ lines), without maps for the two commands and the testing kit
// (scripts/bin-plugins.ts says why) and without a second copy of the fake inside
// `chat-service-fake`, 1.35 MB; 0.4's pacing, the user guides (docs/*.md) and the CHANGELOG
// brought it to 1.57 MB, and maps with one mapping per generated line (scripts/line-maps.ts: still
// a stack trace's file and line) took it to 1.36 MB; lists that move (issue 28), their guide and
// the per-call work (issue 32) to 1.51 MB (the budget was 1.6 MB for a while), and one copy of the
// declarations instead of two (scripts/share-declarations.ts: each ESM `.d.ts` re-exports its
// `.d.cts`) to 1.37 MB; pacing's per-operation limits (scope.ts, own-pace.ts) to 1.53 MB, and the
// built JavaScript without the TSDoc blocks the declarations already carry (scripts/doc-comments.ts)
// to 1.38 MB. What stays: the ESM and CommonJS builds, the maps of stack traces, the guides and the
// CHANGELOG.
// Run `npm run build` first.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'

const BUDGET_BYTES = 320 * 1024
const UNPACKED_BUDGET_BYTES = 1_500_000
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

interface PackedFile {
  readonly path: string
  readonly size: number
}
const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' })) as [
  { size: number; unpackedSize: number; files: PackedFile[] },
]
const maps = pack.files.filter((file) => file.path.endsWith('.map')).reduce((sum, file) => sum + file.size, 0)
const unpackedOk = pack.unpackedSize <= UNPACKED_BUDGET_BYTES
over ||= !unpackedOk
const mb = (bytes: number): string => (bytes / 1e6).toFixed(2)
console.log(
  `package: ${pack.files.length} files, ${mb(pack.unpackedSize)} MB unpacked (${Math.round((100 * maps) / pack.unpackedSize)} % source maps), ` +
    `${mb(pack.size)} MB packed; budget ${mb(UNPACKED_BUDGET_BYTES)} MB unpacked: ${unpackedOk ? 'ok' : 'OVER BUDGET'}`,
)
process.exitCode = over ? 1 : 0
