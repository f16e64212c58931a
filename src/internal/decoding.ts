/**
 * Decoding a response body by its `content-encoding` (RFC 9110, 8.4), as its chunks arrive.
 *
 * Why the SDK's own and not undici's `interceptors.decompress`: undici marks that interceptor
 * experimental, and making one writes an ExperimentalWarning to the process's stderr, which would
 * alarm users' logs (and silencing it took a patch of the global `process.emitWarning`). The work is
 * small with `node:zlib`, and done here the size cap applies to the decoded bytes of every stage.
 */
import type { Transform } from 'node:stream'
import type { Zlib } from 'node:zlib'

type Decoder = Transform & Zlib

/**
 * `node:zlib`, read when a decoder is made (a response with a `content-encoding`), not imported: the
 * first `import` of a built-in makes Node build an ES module facade of all its exports, about 0.5 M
 * instructions that every process importing the SDK would pay (issue 32). Read, not a named import,
 * for another reason too: a named import of `createZstdDecompress` would fail to link on a Node.js
 * without it, before the engine check can say which Node is needed.
 */
const zlib = (): typeof import('node:zlib') => process.getBuiltinModule('node:zlib')

/**
 * The codings the SDK decodes (a map without a prototype: a coding named `constructor` is just
 * unknown). `compress`/`x-compress` (LZW) are not: zlib cannot read them. zstd with the window
 * RFC 9659 allows (8 MiB).
 */
const DECODERS: Readonly<Record<string, (() => Decoder) | undefined>> = Object.assign(Object.create(null) as object, {
  gzip: () => zlib().createGunzip(),
  'x-gzip': () => zlib().createGunzip(),
  deflate: () => zlib().createInflate(),
  br: () => zlib().createBrotliDecompress(),
  zstd: () => {
    const { createZstdDecompress, constants } = zlib()
    return createZstdDecompress({ params: { [constants.ZSTD_d_windowLogMax]: 23 } })
  },
})

/** More codings than this on one response are refused (a cheap way to make a client burn CPU). */
const MAX_CODINGS = 5

/** What a {@link BodyDecoder} reports to the one reading the body. */
export interface DecodedSink {
  /** A chunk of decoded bytes. */
  data(chunk: Buffer): void
  /** Every byte is decoded. */
  end(): void
  /** A coding's bytes are corrupt (or there are too many codings). */
  error(error: Error): void
  /** Input paused because {@link BodyDecoder.write} returned false may go on. */
  drain(): void
}

/**
 * The decoders for a response's `content-encoding` value (codings listed in the order they were
 * applied, so decoded in reverse), or `undefined` when there is nothing to decode or a coding is
 * not one the SDK decodes (then the body is handed over as it came, with its `content-encoding`).
 * @throws Error for more than {@link MAX_CODINGS} codings.
 */
export function decoderFor(contentEncoding: string | undefined, sink: DecodedSink): BodyDecoder | undefined {
  if (contentEncoding === undefined) return undefined
  const codings = contentEncoding
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding !== 'identity')
  if (codings.length === 0) return undefined
  if (codings.length > MAX_CODINGS) throw new Error(`Too many content codings in the response: ${codings.length}, at most ${MAX_CODINGS}`)
  const makers = codings.reverse().map((coding) => DECODERS[coding])
  if (makers.some((make) => make === undefined)) return undefined
  return new BodyDecoder(
    makers.map((make) => (make as () => Decoder)()),
    sink,
  )
}

/** A chain of zlib decoders fed with the body's chunks; the last one's output goes to the sink. */
export class BodyDecoder {
  readonly #stages: Decoder[]
  #done = false

  constructor(stages: Decoder[], sink: DecodedSink) {
    this.#stages = stages
    const first = stages[0] as Decoder
    first.on('drain', () => {
      if (!this.#done) sink.drain()
    })
    stages.forEach((stage, i) => {
      stage.on('error', (error: Error) => {
        if (this.#done) return
        this.#finish()
        sink.error(error)
      })
      const next = stages[i + 1]
      if (next === undefined) {
        stage.on('data', (chunk: Buffer) => {
          if (!this.#done) sink.data(chunk)
        })
        stage.on('end', () => {
          if (this.#done) return
          this.#finish()
          sink.end()
        })
        return
      }
      // A stage waits while the next one is behind, so no stage inflates far ahead of the sink.
      stage.on('data', (chunk: Buffer) => {
        if (!next.write(chunk)) stage.pause()
      })
      next.on('drain', () => stage.resume())
      stage.on('end', () => next.end())
    })
  }

  /** Feeds a chunk of the encoded body; returns false when input should pause until `backpressure(false)`. */
  write(chunk: Buffer): boolean {
    if (this.#done) return true
    return (this.#stages[0] as Decoder).write(chunk)
  }

  /** The encoded body is complete: the decoders flush, then the sink's `end` (or `error`) follows. */
  end(): void {
    if (!this.#done) (this.#stages[0] as Decoder).end()
  }

  /** Stops decoding and frees the decoders (zlib holds native memory until destroyed). Idempotent. */
  destroy(): void {
    this.#finish()
  }

  #finish(): void {
    if (this.#done) return
    this.#done = true
    for (const stage of this.#stages) stage.destroy()
  }
}
