import type { ClientOptions, ClientOverrides } from './core/options.ts'
import { checkArguments } from './internal/args.ts'
import { INSPECT_CUSTOM, inspect } from './internal/inspect.ts'
import { clientSettings } from './internal/option-table.ts'
import { warnDeprecatedOptions } from './internal/deprecated-api.ts'
import { acceptedClientOptions, clientOptionsSchema, clientOverridesSchema } from './internal/options-schema.ts'
import { RequestPipeline } from './internal/pipeline.ts'
import { MIN_SUBSTRING_SECRET_LENGTH, REDACTED, Redactor } from './internal/redact.ts'
import { defaultOptions, mergeOptions, type ResolvedOptions } from './internal/resolved-options.ts'
import { LOG_ENV, resolveLogLevel } from './internal/sdk-logger.ts'
import { Transport } from './internal/transport.ts'
import { resolveBaseUrl } from './internal/url.ts'
import { ChatServiceError, RequestValidationError, type ValidationIssue } from './errors/errors.ts'
import { createAgents, type Agents } from './resources/agents.ts'
import { createAuth, type Auth } from './resources/auth.ts'
import { createConversations, type Conversations } from './resources/conversations.ts'
import { createCustomerUsers, type CustomerUsers } from './resources/customer-users.ts'
import { detectRuntime, refusalMessage } from './runtime.ts'

/**
 * The environment variables the client reads for these options when they are not given in code.
 * (`logLevel` falls back to `CHAT_SERVICE_LOG` the same way.)
 */
export const ENVIRONMENT_VARIABLES = {
  baseUrl: 'CHAT_SERVICE_BASE_URL',
  keyId: 'CHAT_SERVICE_KEY_ID',
  keySecret: 'CHAT_SERVICE_KEY_SECRET',
} as const

/** What a client is made of; a client derived with `withOptions` shares all but `options` and `ownClosing`. */
interface ClientParts {
  readonly transport: Transport
  readonly baseUrl: string
  readonly keyId: string
  /** The options its calls are made with (before each call's own). */
  readonly options: ResolvedOptions
  /** Set on a derived client: closes it without closing the pool it borrows. */
  readonly ownClosing: AbortController | undefined
  /** Aborted when this client is closed, or a client it derives from. */
  readonly closing: AbortSignal
}

/** Warned once per process, not per client. */
let warnedAboutLogEnv = false

/**
 * Client of the Chat Service management API (spec: the whole document), for company servers only.
 *
 * ```ts
 * const client = new ChatServiceClient({ baseUrl, keyId, keySecret }) // or new ChatServiceClient() with CHAT_SERVICE_* set
 * const { token } = await client.auth.issueToken({ userId: 'u-42', agentId })
 * for await (const user of client.customerUsers.list({ limit: 100 })) { ... }
 * await client.close()
 * ```
 *
 * Every request goes to exactly one `/rest/v1` prefix and carries `keyId` and `keySecret` as members
 * of a JSON body (GET included), never in a header or the URL. The client owns a keep-alive
 * connection pool; release it with {@link ChatServiceClient.close} or `await using`.
 *
 * @throws RequestValidationError from the constructor when an option is missing or invalid (no
 * `keyId` in the options or `CHAT_SERVICE_KEY_ID`, a `baseUrl` that is not http(s), an `http:` URL
 * on a non-loopback host without `allowInsecureHttp`, ...); ChatServiceError when constructed in a
 * browser, a web worker, an edge runtime or an Electron renderer without `dangerouslyAllowBrowser`
 * (Node.js with a DOM shim such as happy-dom or jsdom is a server: allowed), and always on Bun.
 */
export class ChatServiceClient implements AsyncDisposable {
  /**
   * The environment variables the client reads `baseUrl`, `keyId` and `keySecret` from when the
   * options do not give them: `CHAT_SERVICE_BASE_URL`, `CHAT_SERVICE_KEY_ID` and
   * `CHAT_SERVICE_KEY_SECRET`, by option name (`logLevel` falls back to `CHAT_SERVICE_LOG` the same
   * way). For a wrapper that reads or reports them itself, as the `chat-service` command does.
   */
  static readonly ENVIRONMENT_VARIABLES = ENVIRONMENT_VARIABLES

  /** Token issuance (spec, Endpoint 1). */
  readonly auth: Auth
  /** Customer users (spec, Endpoints 2 and 3). */
  readonly customerUsers: CustomerUsers
  /** Agents (spec, Endpoint 4). */
  readonly agents: Agents
  /** Conversations and their messages (spec, Endpoints 5 and 6). */
  readonly conversations: Conversations
  /** Where requests go: the origin, any path you gave, and one `/rest/v1`, e.g. `https://chat.example.com/rest/v1`. */
  readonly baseUrl: string
  /** The API key identifier in use (not a secret; the key secret is never exposed). */
  readonly keyId: string
  readonly #transport: Transport
  readonly #options: ResolvedOptions
  /** Set on a derived client: closes it without closing the pool it borrows. */
  readonly #ownClosing: AbortController | undefined
  /** Aborted when this client is closed, or a client it derives from. */
  readonly #closing: AbortSignal

  /**
   * What the client being made by {@link ChatServiceClient.#derive} is made of; set only while that
   * runs the constructor, which takes it at once (so a derived client never reads options or the
   * environment).
   */
  static #deriving: ClientParts | undefined

  /**
   * @param options - See {@link ClientOptions}. `baseUrl`, `keyId` and `keySecret` default to the
   * environment variables `CHAT_SERVICE_BASE_URL`, `CHAT_SERVICE_KEY_ID`, `CHAT_SERVICE_KEY_SECRET`.
   */
  constructor(options: ClientOptions = {}) {
    const parts = ChatServiceClient.#deriving ?? ChatServiceClient.#fromOptions(options)
    ChatServiceClient.#deriving = undefined
    this.#transport = parts.transport
    this.baseUrl = parts.baseUrl
    this.keyId = parts.keyId
    this.#options = parts.options
    this.#ownClosing = parts.ownClosing
    this.#closing = parts.closing
    const pipeline = new RequestPipeline(parts.transport, parts.options, parts.closing)
    this.auth = createAuth(pipeline)
    this.customerUsers = createCustomerUsers(pipeline)
    this.agents = createAgents(pipeline)
    this.conversations = createConversations(pipeline)
  }

  /** The parts of a client made with `new`: options checked, the environment read, a transport of its own. */
  static #fromOptions(options: ClientOptions): ClientParts {
    refuseBrowser(options)
    // Well-formed options are taken without zod; anything else goes to the schema, which reports it.
    const valid = acceptedClientOptions(options) ?? checkArguments('new ChatServiceClient', [clientOptionsSchema(), options])[0]
    const { baseUrl, keyId, keySecret } = fromEnvironment(valid, process.env)
    const base = resolveBaseUrl(baseUrl)
    if (Array.isArray(base))
      throw new RequestValidationError(
        'new ChatServiceClient',
        base.map((issue) => fromVariable(issue, valid.baseUrl)),
      )
    if (base.origin.startsWith('http:') && !base.loopback && valid.allowInsecureHttp !== true) {
      throw new RequestValidationError('new ChatServiceClient', [
        fromVariable(
          {
            path: ['baseUrl'],
            code: 'invalid_format',
            message:
              'Refusing http: on a non-loopback host: the key secret would cross the network in clear text. Use https:, or pass allowInsecureHttp: true',
          },
          valid.baseUrl,
        ),
      ])
    }
    const redactor = new Redactor(keySecret)
    const logLevel = resolveLogLevel(valid.logLevel, process.env[LOG_ENV])
    const resolved = mergeOptions(defaultOptions(redactor, logLevel.level), valid)
    // Every option only `new` takes (the option table's `client` rows, defaults filled in) goes to
    // the transport as it is: one the transport reads needs no line here.
    const transport = new Transport({
      ...clientSettings(valid),
      origin: base.origin,
      prefix: base.prefix,
      keyId,
      keySecret,
      redactor,
      connectTimeout: resolved.timeout,
    })

    warnDeprecatedOptions(valid, resolved.log)
    if (logLevel.invalidEnv !== undefined && !warnedAboutLogEnv) {
      warnedAboutLogEnv = true
      resolved.log.log(
        'warn',
        `${LOG_ENV}=${logLevel.invalidEnv} is not a log level; using 'warn'. Valid values: off, error, warn, info, debug`,
      )
    }
    if (keySecret.length < MIN_SUBSTRING_SECRET_LENGTH) {
      resolved.log.log(
        'warn',
        `keySecret is only ${keySecret.length} characters long, too short to be a real key secret: check keySecret / ${ENVIRONMENT_VARIABLES.keySecret}. ` +
          `Secrets this short are scrubbed from messages only where they stand as a whole word.`,
      )
    }
    return { transport, baseUrl: base.href, keyId, options: resolved, ownClosing: undefined, closing: transport.closing }
  }

  /** The private factory of derived clients: runs the constructor with `parts` instead of options. */
  static #derive(parts: ClientParts): ChatServiceClient {
    ChatServiceClient.#deriving = parts
    try {
      return new ChatServiceClient()
    } finally {
      ChatServiceClient.#deriving = undefined
    }
  }

  /**
   * A client that makes its calls with other defaults (any option of {@link ClientOverrides}), and
   * shares this client's service, key pair, connection pool, 429 pause (with its `rateLimitStore`)
   * and secret redaction. `headers` are merged over this client's. Cheap: make one per use.
   *
   * ```ts
   * const patient = client.withOptions({ timeout: 120_000, maxRetries: 5 })
   * ```
   *
   * The pool belongs to the client constructed with `new`. `close()` on a derived client ends that
   * client and the clients derived from it (their later calls and retry waits reject with
   * ChatServiceError); `close()` on the client that owns the pool closes it for every client
   * derived from it, which then reject new calls the same way.
   * @throws RequestValidationError for an option that only `new ChatServiceClient` takes (one of
   * {@link ClientOptions} that {@link ClientOverrides} does not have, such as `baseUrl` or
   * `rateLimitStore`: the service, the key pair, the pool and the pause belong to the client made
   * with `new`) or an invalid value.
   */
  withOptions(overrides: ClientOverrides): ChatServiceClient {
    const [valid] = checkArguments({ operation: 'client.withOptions', redactor: this.#transport.redactor }, [
      clientOverridesSchema(),
      overrides,
    ])
    const options = mergeOptions(this.#options, valid)
    warnDeprecatedOptions(valid, options.log)
    const ownClosing = new AbortController()
    return ChatServiceClient.#derive({
      transport: this.#transport,
      baseUrl: this.baseUrl,
      keyId: this.keyId,
      options,
      ownClosing,
      // Closed with its parent (and so with the pool's owner), or on its own.
      closing: AbortSignal.any([this.#closing, ownClosing.signal]),
    })
  }

  /**
   * Releases the connection pool once in-flight requests finish (a client made by `withOptions`
   * does not own it: see there). A `dispatcher` you passed in is yours and stays open. Later calls
   * and pending retry waits reject with ChatServiceError. Idempotent.
   */
  close(): Promise<void> {
    if (this.#ownClosing === undefined) return this.#transport.close()
    this.#ownClosing.abort()
    return Promise.resolve()
  }

  /**
   * When the client-wide pause after a 429 ends, or `undefined` while calls are not paused. The
   * pause is shared by this client, the client it derives from and every client derived from them:
   * after a 429, new attempts wait until then (or, with `rateLimitPause: 'fail'`, are refused with
   * RateLimitError); requests already in flight go on. With a `rateLimitStore`, this includes the
   * store's value as last read (reading this property does not read the store: calls do, at most
   * every `maxAgeMs` of the store, 100 ms unless it says otherwise).
   */
  get rateLimitedUntil(): Date | undefined {
    const until = this.#transport.rateLimitedUntil
    return until === undefined ? undefined : new Date(until)
  }

  /**
   * Requests per second the client allows itself now (see the `pacing` option), or `undefined`
   * while it is not paced: before the first 429, with `pacing: 'off'`, and again after 5 minutes
   * without one. Shared by this client, the client it derives from and every client derived from
   * them; with a `rateLimitStore` that has `take`, it follows the rate every process of the store
   * spends together. Changes are also logged at `info` and published on `PACING_CHANNEL`.
   */
  get pacedRate(): number | undefined {
    return this.#transport.pacedRate
  }

  /** Same as {@link ChatServiceClient.close}; lets you write `await using client = new ChatServiceClient(...)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** `{ baseUrl, keyId, keySecret: '[REDACTED]' }`: safe to log. */
  toJSON(): { baseUrl: string; keyId: string; keySecret: string } {
    return { baseUrl: this.baseUrl, keyId: this.keyId, keySecret: REDACTED }
  }

  // util.inspect shows the same safe view as toJSON. Defined on the prototype here rather than as a
  // method, so that the published declarations carry no member keyed by an internal symbol.
  static {
    Object.defineProperty(this.prototype, INSPECT_CUSTOM, {
      value(this: ChatServiceClient): string {
        return `ChatServiceClient ${inspect(this.toJSON())}`
      },
      writable: true,
      configurable: true,
    })
  }
}

function refuseBrowser(options: ClientOptions): void {
  // The runtime, not its globals: happy-dom and jsdom add `window` to Node.js (runtime.ts).
  const kind = detectRuntime()
  const bun = (globalThis as { process?: { versions?: { bun?: string } } }).process?.versions?.bun
  const message = refusalMessage(kind, (options as ClientOptions | undefined)?.dangerouslyAllowBrowser === true, bun)
  if (message !== undefined) throw new ChatServiceError(message)
}

/**
 * `baseUrl`, `keyId` and `keySecret`: the option when given, else its environment variable.
 * @throws RequestValidationError naming the option and the variable of each one missing.
 */
function fromEnvironment(
  options: Pick<ClientOptions, 'baseUrl' | 'keyId' | 'keySecret'>,
  env: NodeJS.ProcessEnv,
): { baseUrl: string | URL; keyId: string; keySecret: string } {
  const issues: ValidationIssue[] = []
  const pick = (name: keyof typeof ENVIRONMENT_VARIABLES): string | URL => {
    const value = options[name] ?? env[ENVIRONMENT_VARIABLES[name]]
    if (value !== undefined && value !== '') return value
    issues.push({
      path: [name],
      code: 'invalid_type',
      message: `Missing ${name}: pass it in the options, or set the environment variable ${ENVIRONMENT_VARIABLES[name]}`,
    })
    return ''
  }
  const resolved = { baseUrl: pick('baseUrl'), keyId: String(pick('keyId')), keySecret: String(pick('keySecret')) }
  for (const name of ['keyId', 'keySecret'] as const) {
    const value = resolved[name]
    if (value !== '' && value.trim() !== value) {
      // Never the value itself: for keySecret it is the secret.
      const from = options[name] === undefined ? ` (from ${ENVIRONMENT_VARIABLES[name]})` : ''
      issues.push({
        path: [name],
        code: 'invalid_format',
        message: `${name} starts or ends with whitespace${from}, which the service would refuse with 401: trim it (a secrets file often ends in a newline)`,
      })
    }
  }
  if (issues.length > 0) throw new RequestValidationError('new ChatServiceClient', issues)
  return resolved
}

/** Says where a bad `baseUrl` came from when it came from the environment. */
function fromVariable(issue: ValidationIssue, given: ClientOptions['baseUrl']): ValidationIssue {
  return given === undefined ? { ...issue, message: `${issue.message} (from ${ENVIRONMENT_VARIABLES.baseUrl})` } : issue
}
