// The SDK's source maps (dist/index.js.map, dist/index.cjs.map) are there for stack traces: a frame
// of the SDK in a user's trace (node --enable-source-maps, an error tracker) names the src/ file and
// line. esbuild maps every expression of every line (columns included), which a stack trace does not
// need: kept whole, the two maps were a fifth of the package. This keeps, for each generated line,
// its first mapping only: every line still maps to its source file and line (the column to the
// start of that line's first mapped code), in a fraction of the bytes.
import { readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { decode, encode } from '@jridgewell/sourcemap-codec'
import type { Options } from 'tsup'

type TsupPlugin = NonNullable<Options['plugins']>[number]

/** A source map's `mappings` with one segment per generated line (the first), or none where the line had none. */
export function firstSegmentPerLine(mappings: string): string {
  return encode(decode(mappings).map((segments) => segments.slice(0, 1)))
}

/** Once tsup has written a build: each `.map` it wrote keeps one mapping per generated line. */
export const lineMaps: TsupPlugin = {
  name: 'line-maps',
  async buildEnd({ writtenFiles }) {
    for (const { name } of writtenFiles) {
      if (!name.endsWith('.map')) continue
      const file = resolve(name)
      // A map of a build that ships without one (scripts/bin-plugins.ts) is already gone when this
      // runs: tsup lists the files it wrote, before the other plugins' changes.
      const text = await readFile(file, 'utf8').catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw error
      })
      if (text === undefined) continue
      const map = JSON.parse(text) as { mappings: string }
      map.mappings = firstSegmentPerLine(map.mappings)
      await writeFile(file, JSON.stringify(map))
    }
  },
}
