/**
 * The logic of `chat-service-fake` (the bin, cli.ts, hands it the process): reads the arguments,
 * starts the fake on loopback with a generated dataset, writes what a user needs to reach it, and
 * stops on a signal. It takes the process's parts as arguments so that tests run it in-process.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { DEFAULT_COMPRESSION_MIN_BYTES } from './content-coding.ts'
// The kit's entry, not its modules: the bin (dist/testing/cli.js) imports the built entry beside it
// instead of a second copy of the fake (scripts/bin-plugins.ts).
import {
  createFakeChatService,
  generateDataset,
  type FakeCompression,
  type DeprecationHeaders,
  type FakeServerHandle,
  type GenerateDatasetOptions,
  type RateLimitOptions,
} from './index.ts'

/** Default port: fixed, so that the printed environment lines stay valid from one run to the next. */
const DEFAULT_PORT = 4010
const DEFAULT_HOST = '127.0.0.1'
/** Requests the command keeps for `GET /__fake/requests` by default: enough for a test run, bounded for a day-long one. */
const DEFAULT_RECORDED = 10_000

const USAGE = `Usage: chat-service-fake [options]

Starts the fake Chat Service (chat-service-sdk/testing) on ${DEFAULT_HOST} with a generated dataset,
and prints its base URL, an API key pair and ready-to-paste environment lines. Ctrl-C stops it.
Loopback clients can steer it over HTTP: POST /__fake/faults, /__fake/seed,
/__fake/append-messages, /__fake/list-moves, /__fake/deprecation; GET /__fake/requests (see
TESTING.md, "Steering a listening fake").

Options:
  --port N             TCP port (default ${DEFAULT_PORT}; 0 picks a free port)
  --host ADDRESS       address to listen on (default ${DEFAULT_HOST}; 0.0.0.0 serves other hosts,
                       e.g. other containers; the /__fake/ commands still answer loopback only)
  --seed N             dataset seed, an integer (default 1): the same seed gives the same data and key
  --latency MS         delay before every response, in ms (default 0)
  --agents N           agents (default 5)
  --customer-users N   customer users (default 50)
  --conversations N    conversations (default 100)
  --messages N         messages, spread over the conversations (default 1000)
  --rate-limit RPS[/BURST]
                       rate-limit each API key pair: a token bucket of BURST requests (default
                       RPS rounded up) refilled at RPS a second; 429 with Retry-After when empty
  --rate-limit-window MS
                       with --rate-limit: a fixed window instead, RPS x MS / 1000 requests per
                       window of MS ms (windows aligned to the clock); 429 for the rest of it
  --rate-limit-retry-after seconds|ms|none
                       how a 429 tells the wait: Retry-After in whole seconds (default),
                       retry-after-ms, or no header at all
  --rate-limit-endpoint 'ENDPOINT=RPS[/BURST]'
                       with --rate-limit: a token bucket of one endpoint's own, taken first (e.g.
                       'POST /rest/v1/auth/token=1'), its 429 told as above; may be repeated
  --deprecation VALUE  send the service's deprecation notice on every response: this Deprecation
                       header (RFC 9745, e.g. @1688169599); also --sunset DATE (Sunset, RFC 8594,
                       an HTTP date) and --deprecation-link VALUE (the Link header), each as given
  --record-requests N  keep the latest N requests for GET /__fake/requests (default ${DEFAULT_RECORDED}; 0: none)
  --compression off|gzip|br
                       compress response bodies with only this coding when the client accepts it,
                       or never (off). Default: gzip or br, as accept-encoding asks (br first)
  --compression-min-bytes N
                       bodies under N bytes go uncompressed (default ${DEFAULT_COMPRESSION_MIN_BYTES}): with its headers such a
                       response fits one TCP segment either way, so compressing it costs CPU and
                       saves nothing (real servers skip them too); 0 compresses every non-empty body
  --json               print one JSON line {"baseUrl","keyId","keySecret"} instead of the text
  --version            print the version of chat-service-sdk, which this command comes with
  -h, --help           show this text
`

/**
 * The version of the package this command comes with, read from its package.json at run time
 * (not bundled into the command): the bin (dist/testing/cli.js) and this file (src/testing/) are
 * both two folders below the package's root.
 */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name?: unknown; version?: unknown }
  if (manifest.name !== 'chat-service-sdk' || typeof manifest.version !== 'string') {
    throw new Error(`the package.json two folders above ${import.meta.url} is not chat-service-sdk's`)
  }
  return manifest.version
}

/** `--compression off|gzip|br`: the codings offered (absent: both). */
function compressionOf(text: string | undefined): FakeCompression {
  if (text === undefined) return true
  if (text === 'off' || text === 'gzip' || text === 'br') return text
  throw new UsageError(`--compression must be off, gzip or br, not ${JSON.stringify(text)}`)
}

/** Bad command-line arguments: reported with the usage text, exit status 2. */
class UsageError extends Error {}

interface CliOptions {
  port: number
  host: string
  recordRequests: number
  latencyMs: number
  compression: FakeCompression
  compressionMinBytes: number
  rateLimit: RateLimitOptions | undefined
  deprecation: DeprecationHeaders | undefined
  dataset: GenerateDatasetOptions
  json: boolean
}

/** `--name value` as a safe integer, at least `min` and at most `max` when given. */
function integer(name: string, text: string | undefined, fallback: number, min?: number, max?: number): number {
  if (text === undefined) return fallback
  const n = Number(text)
  if (/^-?[0-9]+$/.test(text) && Number.isSafeInteger(n) && (min === undefined || n >= min) && (max === undefined || n <= max)) return n
  const range = min === undefined ? '' : max === undefined ? ` >= ${min}` : ` from ${min} to ${max}`
  throw new UsageError(`--${name} must be an integer${range}, not ${JSON.stringify(text)}`)
}

/** `--host ADDRESS`: an IP address or a host name, without a port or brackets. */
function hostOf(text: string | undefined): string {
  if (text === undefined) return DEFAULT_HOST
  if (!/^[A-Za-z0-9.:-]+$/.test(text))
    throw new UsageError(`--host must be an address such as 127.0.0.1, 0.0.0.0 or ::1, not ${JSON.stringify(text)}`)
  return text
}

/** `--rate-limit RPS[/BURST]`, with `--rate-limit-window MS`, `--rate-limit-retry-after` and `--rate-limit-endpoint`s. */
function rateLimitOf(
  text: string | undefined,
  window: string | undefined,
  retryAfter: string | undefined,
  endpointLimits: readonly string[] = [],
): RateLimitOptions | undefined {
  if (text === undefined) {
    if (window !== undefined || retryAfter !== undefined || endpointLimits.length > 0)
      throw new UsageError('--rate-limit-window, --rate-limit-retry-after and --rate-limit-endpoint need --rate-limit')
    return undefined
  }
  const after = { seconds: 'seconds', ms: 'milliseconds', none: 'none', undefined: undefined } as const
  const mode = after[String(retryAfter) as keyof typeof after]
  if (retryAfter !== undefined && mode === undefined) {
    throw new UsageError(`--rate-limit-retry-after must be seconds, ms or none, not ${JSON.stringify(retryAfter)}`)
  }
  const limit = bucketOf(text)
  const endpoints = endpointsOf(endpointLimits, mode)
  if (window === undefined) return { ...limit, retryAfter: mode, endpoints }
  if (limit.burst !== undefined) throw new UsageError('--rate-limit RPS/BURST has no BURST with --rate-limit-window: a window has no burst')
  return {
    algorithm: 'fixed-window',
    requestsPerSecond: limit.requestsPerSecond,
    windowMs: integer('rate-limit-window', window, 1_000, 1, 3_600_000),
    retryAfter: mode,
    endpoints,
  }
}

/** `--rate-limit-endpoint 'ENDPOINT=RPS[/BURST]'`s: a token bucket of each endpoint's own, its 429 told as `retryAfter` says. */
function endpointsOf(texts: readonly string[], retryAfter: RateLimitOptions['retryAfter']): RateLimitOptions['endpoints'] {
  if (texts.length === 0) return undefined
  // The names are checked by the fake (a RangeError naming the spec's endpoints, shown as a usage
  // error): the command imports the kit's entry, not its endpoint table (see the imports).
  const endpoints: Record<string, RateLimitOptions> = {}
  for (const text of texts) {
    const at = text.lastIndexOf('=')
    const name = text.slice(0, Math.max(0, at)).trim()
    if (at < 0 || name === '')
      throw new UsageError(
        `--rate-limit-endpoint must be 'ENDPOINT=RPS[/BURST]', e.g. 'POST /rest/v1/auth/token=1', not ${JSON.stringify(text)}`,
      )
    if (name in endpoints) throw new UsageError(`--rate-limit-endpoint names ${name} twice`)
    endpoints[name] = { ...bucketOf(text.slice(at + 1), '--rate-limit-endpoint'), retryAfter }
  }
  return endpoints
}

/** `--rate-limit RPS[/BURST]` (or another `flag`'s): RPS a number > 0, BURST an integer >= 1. */
function bucketOf(text: string, flag = '--rate-limit'): RateLimitOptions {
  const match = /^(\d+(?:\.\d+)?)(?:\/(\d+))?$/.exec(text.trim())
  const rps = match === null ? Number.NaN : Number(match[1])
  const burst = match?.[2] === undefined ? undefined : Number(match[2])
  if (!(rps > 0) || (burst !== undefined && !(Number.isSafeInteger(burst) && burst >= 1))) {
    throw new UsageError(
      `${flag} must be RPS or RPS/BURST (requests per second > 0, burst an integer >= 1), e.g. 10/20, not ${JSON.stringify(text)}`,
    )
  }
  return { requestsPerSecond: rps, burst }
}

function parse(args: string[]): CliOptions | 'help' | 'version' {
  let values
  try {
    ;({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        seed: { type: 'string' },
        latency: { type: 'string' },
        agents: { type: 'string' },
        'customer-users': { type: 'string' },
        conversations: { type: 'string' },
        messages: { type: 'string' },
        'rate-limit': { type: 'string' },
        'rate-limit-window': { type: 'string' },
        'rate-limit-retry-after': { type: 'string' },
        'rate-limit-endpoint': { type: 'string', multiple: true },
        deprecation: { type: 'string' },
        sunset: { type: 'string' },
        'deprecation-link': { type: 'string' },
        host: { type: 'string' },
        'record-requests': { type: 'string' },
        compression: { type: 'string' },
        'compression-min-bytes': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', default: false },
      },
    }))
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  if (values.help) return 'help'
  if (values.version) return 'version'
  const latency = values.latency === undefined ? 0 : Number(values.latency)
  if (values.latency !== undefined && (values.latency.trim() === '' || !Number.isFinite(latency) || latency < 0)) {
    throw new UsageError(`--latency must be a number of ms >= 0, not ${JSON.stringify(values.latency)}`)
  }
  return {
    port: integer('port', values.port, DEFAULT_PORT, 0, 65535),
    host: hostOf(values.host),
    recordRequests: integer('record-requests', values['record-requests'], DEFAULT_RECORDED, 0),
    latencyMs: latency,
    compression: compressionOf(values.compression),
    compressionMinBytes: integer('compression-min-bytes', values['compression-min-bytes'], DEFAULT_COMPRESSION_MIN_BYTES, 0),
    rateLimit: rateLimitOf(
      values['rate-limit'],
      values['rate-limit-window'],
      values['rate-limit-retry-after'],
      values['rate-limit-endpoint'],
    ),
    deprecation:
      values.deprecation === undefined && values.sunset === undefined && values['deprecation-link'] === undefined
        ? undefined
        : { deprecation: values.deprecation, sunset: values.sunset, link: values['deprecation-link'] },
    json: values.json,
    dataset: {
      seed: integer('seed', values.seed, 1),
      agents: integer('agents', values.agents, 5, 0),
      customerUsers: integer('customer-users', values['customer-users'], 50, 0),
      conversations: integer('conversations', values.conversations, 100, 0),
      messages: integer('messages', values.messages, 1000, 0),
    },
  }
}

/** `10 requests/s, bursts of 20` or `100 requests per 1000 ms window`, and how a 429 tells the wait. */
function describeLimit(limit: RateLimitOptions): string {
  const told = { seconds: 'Retry-After in seconds', milliseconds: 'retry-after-ms', none: 'no Retry-After' }[limit.retryAfter ?? 'seconds']
  const own = Object.entries(limit.endpoints ?? {}).map(([name, its]) => `; ${name} alone: ${rateOf(its)}`)
  return `${rateOf(limit)}, ${told}${own.join('')}`
}

/** `10 requests/s, bursts of 20` or `100 requests per 1000 ms window (fixed)`. */
function rateOf(limit: Omit<RateLimitOptions, 'endpoints'>): string {
  if (limit.algorithm === 'fixed-window') {
    const windowMs = limit.windowMs ?? 1_000
    return `${Math.max(1, Math.floor((limit.requestsPerSecond * windowMs) / 1000))} requests per ${windowMs} ms window (fixed)`
  }
  return `${limit.requestsPerSecond} requests/s, bursts of ${limit.burst ?? Math.max(1, Math.ceil(limit.requestsPerSecond))}`
}

function describe(options: CliOptions, server: FakeServerHandle, companyId: string): string {
  const { baseUrl, keyId, keySecret } = server.clientOptions()
  const d = options.dataset
  const latency = options.latencyMs > 0 ? `, ${options.latencyMs} ms latency` : ''
  const coding = options.compression === true ? 'gzip or br' : options.compression
  const compression =
    options.compression === 'off'
      ? 'Compression: off'
      : `Compression: ${coding} for bodies of ${options.compressionMinBytes} bytes or more, as accept-encoding asks`
  const limit = options.rateLimit
  const rate = limit === undefined ? '' : `\nRate limit per API key pair: ${describeLimit(limit)}`
  return `chat-service-fake: the fake Chat Service is listening on ${baseUrl}
Dataset: seed ${d.seed}, ${d.agents} agents, ${d.customerUsers} customer users, ${d.conversations} conversations, ${d.messages} messages${latency}${rate}
${compression}

API key pair (company ${companyId}):
  keyId      ${keyId}
  keySecret  ${keySecret}

Environment, for a .env file (in a shell, put "export " before each line):
CHAT_SERVICE_BASE_URL=${baseUrl}
CHAT_SERVICE_KEY_ID=${keyId}
CHAT_SERVICE_KEY_SECRET=${keySecret}

Steer it from this machine (TESTING.md, "Steering a listening fake"):
  curl -X POST ${server.url}/__fake/faults -H 'content-type: application/json' -d '{"n":1,"fault":{"status":503}}'
  curl ${server.url}/__fake/requests

Press Ctrl-C to stop.
`
}

/** Where the command writes. */
export interface CommandOutput {
  out(text: string): void
  err(text: string): void
}

/** The outcome of {@link runCommand}: an exit status, or a running server to close on a signal. */
export type CommandResult = { exitCode: number } | { server: FakeServerHandle; json: boolean }

/**
 * Runs `chat-service-fake` with `args` (without the node and script paths). Returns the exit
 * status when there is nothing to serve: 0 for `--help` and `--version`, 2 for bad arguments, 1
 * when the server cannot start; otherwise the running server, after writing its description.
 */
export async function runCommand(args: string[], output: CommandOutput): Promise<CommandResult> {
  let options: CliOptions | 'help' | 'version'
  let seed
  let fake
  try {
    options = parse(args)
    if (options === 'help') {
      output.out(USAGE)
      return { exitCode: 0 }
    }
    if (options === 'version') {
      output.out(`chat-service-fake ${packageVersion()}\n`)
      return { exitCode: 0 }
    }
    // RangeError for impossible combinations (e.g. conversations without customer users).
    seed = generateDataset(options.dataset)
    // A bounded request log: GET /__fake/requests reads it, and a dev server may run for days.
    // RangeError for a limit the fake refuses (an endpoint of --rate-limit-endpoint not in the spec).
    fake = createFakeChatService({
      seed,
      latencyMs: options.latencyMs,
      recordRequests: options.recordRequests,
      rateLimit: options.rateLimit,
      compression: options.compression,
      compressionMinBytes: options.compressionMinBytes,
      deprecation: options.deprecation,
    })
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof RangeError)) throw error
    output.err(`chat-service-fake: ${error.message}\n\n${USAGE}`)
    return { exitCode: 2 }
  }
  let server: FakeServerHandle
  try {
    server = await fake.listen({ port: options.port, host: options.host })
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const reason = code === 'EADDRINUSE' ? `port ${options.port} on ${options.host} is in use` : String(error)
    output.err(`chat-service-fake: cannot start: ${reason}; pass --port N (0 picks a free port)\n`)
    return { exitCode: 1 }
  }
  const companyId = seed.companies[0]?.id ?? ''
  output.out(options.json ? `${JSON.stringify(server.clientOptions())}\n` : describe(options, server, companyId))
  return { server, json: options.json }
}

/** The parts of `process` that {@link stopOnSignals} uses. */
export interface SignalTarget {
  on(event: 'SIGINT' | 'SIGTERM' | 'disconnect', listener: () => void): unknown
  /** `true` when started with an IPC channel (`child_process.fork`, or `stdio: [..., 'ipc']`). */
  readonly connected?: boolean
  disconnect?(): void
  exit(code: number): void
}

/**
 * Closes the server on Ctrl-C (SIGINT), SIGTERM, or, when started with an IPC channel, when the
 * parent goes away; then lets the process end (exit status 0). A second signal while closing
 * exits at once with status 1. Resolves once the server is closed.
 */
export function stopOnSignals(
  running: { server: FakeServerHandle; json: boolean },
  target: SignalTarget,
  output: CommandOutput,
): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false
    const stop = (): void => {
      if (stopping) {
        target.exit(1) // do not make the user wait
        return
      }
      stopping = true
      void running.server.close().then(() => {
        if (!running.json) output.err('chat-service-fake: stopped\n')
        // An open IPC channel would keep the process alive.
        if (target.connected === true) target.disconnect?.()
        resolve()
      })
    }
    target.on('SIGINT', stop)
    target.on('SIGTERM', stop)
    if (target.connected === true) target.on('disconnect', stop)
  })
}
