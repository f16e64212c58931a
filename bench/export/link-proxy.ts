// An emulated network link on loopback: a TCP proxy (node:net) between the client and the export
// server that shapes bandwidth and adds latency, so an export can be timed as over a real link.
//
// How it works. Each direction (client → server "up", server → client "down") is ONE link shared by
// all connections, like a real access link: a FIFO queue that transmits at `bitsPerSecond`. A chunk
// read from a socket is cut into slices of at most 16 KiB (so a large write trickles out as it
// would in packets); each slice starts transmitting when the link is free, takes bytes / bandwidth
// to transmit, then arrives `oneWayDelayMs` later (propagation); slices of a direction leave the
// queue in order, so every connection's byte order is kept. With a 10 ms one-way delay a request
// and its response cost 20 ms of round trip on top of transmission and the server's own latency.
// A new connection also pays one round trip (the TCP handshake) before its first byte moves.
//
// What it does not model: TCP's congestion window and slow start (a new connection sends at full
// link speed at once), packet loss and retransmission, per-packet header bytes (only payload bytes
// count against the bandwidth), TLS, and a bounded router buffer (the queue is unbounded; an
// export's in-flight responses bound it in practice). Timers fire with ~1 ms granularity; a slice
// may be delivered up to 1 ms early rather than re-armed for a fraction of a millisecond.
import net from 'node:net'

export interface LinkOptions {
  targetHost: string
  targetPort: number
  bitsPerSecond: number
  oneWayDelayMs: number
}

export interface LinkStats {
  /** Payload bytes carried client → server and server → client since the last reset. */
  upBytes: number
  downBytes: number
  /** Connections opened since the last reset. */
  connections: number
  /** Most bytes waiting in the down direction's queue at once (queueing at the bottleneck). */
  peakQueuedDownBytes: number
}

export interface LinkProxy {
  url: string
  stats(): LinkStats
  reset(): void
  close(): Promise<void>
}

const SLICE = 16 * 1024

interface Slice {
  dest: net.Socket
  /** `null` marks the end of the source's stream: end `dest` once everything before it arrived. */
  chunk: Buffer | null
  at: number
}

/** One direction of the link: a FIFO transmitting at a fixed rate, then a fixed propagation delay. */
class Direction {
  bytes = 0
  queued = 0
  peakQueued = 0
  readonly #bytesPerMs: number
  readonly #delayMs: number
  #freeAt = 0
  readonly #queue: Slice[] = []
  #head = 0
  #timer: NodeJS.Timeout | undefined

  constructor(bitsPerSecond: number, delayMs: number) {
    this.#bytesPerMs = bitsPerSecond / 8 / 1000
    this.#delayMs = delayMs
  }

  send(dest: net.Socket, chunk: Buffer): void {
    for (let offset = 0; offset < chunk.length; offset += SLICE) {
      const slice = chunk.subarray(offset, offset + SLICE)
      this.#freeAt = Math.max(performance.now(), this.#freeAt) + slice.length / this.#bytesPerMs
      this.#queue.push({ dest, chunk: slice, at: this.#freeAt + this.#delayMs })
      this.bytes += slice.length
      this.queued += slice.length
    }
    this.peakQueued = Math.max(this.peakQueued, this.queued)
    this.#arm()
  }

  end(dest: net.Socket): void {
    this.#queue.push({ dest, chunk: null, at: Math.max(performance.now(), this.#freeAt) + this.#delayMs })
    this.#arm()
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#head >= this.#queue.length) return
    this.#timer = setTimeout(this.#flush, Math.max(0, this.#queue[this.#head]!.at - performance.now()))
  }

  readonly #flush = (): void => {
    this.#timer = undefined
    const now = performance.now() + 1 // timer granularity: deliver what is due within the next ms
    while (this.#head < this.#queue.length && this.#queue[this.#head]!.at <= now) {
      const { dest, chunk } = this.#queue[this.#head++]!
      if (chunk === null) {
        if (!dest.destroyed) dest.end()
        continue
      }
      this.queued -= chunk.length
      if (!dest.destroyed) dest.write(chunk)
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head)
      this.#head = 0
    }
    this.#arm()
  }
}

export async function startLinkProxy(options: LinkOptions): Promise<LinkProxy> {
  const up = new Direction(options.bitsPerSecond, options.oneWayDelayMs)
  const down = new Direction(options.bitsPerSecond, options.oneWayDelayMs)
  let connections = 0
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    connections++
    sockets.add(client)
    client.setNoDelay(true)
    client.pause()
    const upstream = net.connect(options.targetPort, options.targetHost)
    sockets.add(upstream)
    upstream.setNoDelay(true)
    const handshake = new Promise<void>((resolve) => setTimeout(resolve, 2 * options.oneWayDelayMs))
    const connected = new Promise<void>((resolve) => {
      upstream.once('connect', () => {
        resolve()
      })
    })
    void Promise.all([handshake, connected]).then(() => {
      client.resume()
    })
    client.on('data', (chunk: Buffer) => {
      up.send(upstream, chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      down.send(client, chunk)
    })
    client.on('end', () => {
      up.end(upstream)
    })
    upstream.on('end', () => {
      down.end(client)
    })
    const teardown = (): void => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('error', teardown)
    upstream.on('error', teardown)
    client.on('close', teardown)
    upstream.on('close', teardown)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ upBytes: up.bytes, downBytes: down.bytes, connections, peakQueuedDownBytes: down.peakQueued }),
    reset: () => {
      up.bytes = down.bytes = connections = 0
      down.peakQueued = down.queued
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => {
          resolve()
        })
      }),
  }
}
