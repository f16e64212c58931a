import { inspect } from 'node:util'
import type { LogLevel, Logger } from './core/logger.ts'
import {
  DEFAULT_CONNECTIONS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type ClientOptions,
  type ClientOverrides,
} from './core/options.ts'
import type { ResponseValidation } from './core/response.ts'
import { checkArguments } from './internal/args.ts'
import { clientOptionsSchema, clientOverridesSchema } from './internal/options-schema.ts'
import { RequestPipeline, type ClientSettings } from './internal/pipeline.ts'
import { MIN_SUBSTRING_SECRET_LENGTH, REDACTED, Redactor } from './internal/redact.ts'
import { LOG_ENV, resolveLogLevel, SdkLogger } from './internal/sdk-logger.ts'
import { requestHeaders, Transport } from './internal/transport.ts'
import { resolveBaseUrl } from './internal/url.ts'
import { ChatServiceError, RequestValidationError, type ValidationIssue } from './errors/errors.ts'
import { createAgents, type Agents } from './resources/agents.ts'
import { createAuth, type Auth } from './resources/auth.ts'
import { createConversations, type Conversations } from './resources/conversations.ts'
import { createCustomerUsers, type CustomerUsers } from './resources/customer-users.ts'

/**
 * The environment variables the client reads for these options when they are not given in code.
 * (`logLevel` falls back to `CHAT_SERVICE_LOG` the same way.)
 */
export const ENVIRONMENT_VARIABLES = {
  baseUrl: 'CHAT_SERVICE_BASE_URL',
  keyId: 'CHAT_SERVICE_KEY_ID',
  keySecret: 'CHAT_SERVICE_KEY_SECRET',
} as const

/** Every default a client makes calls with, resolved: what `withOptions` starts from. */
interface CallDefaults {
  readonly timeout: number
  readonly maxRetries: number
  readonly headers: Readonly<Record<string, string>>
  readonly logger: Logger
  readonly logLevel: LogLevel
  readonly maxResponseBytes: number
  readonly responseValidation: ResponseValidation
  readonly compression: boolean
}

/** What a derived client is made from (see {@link ChatServiceClient.withOptions}). */
class Derivation {
  readonly parent: { transport: Transport; baseUrl: string; keyId: string; defaults: CallDefaults; closing: AbortSignal }
  readonly overrides: ClientOverrides

  constructor(parent: Derivation['parent'], overrides: ClientOverrides) {
    this.parent = parent
    this.overrides = overrides
  }
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
 * browser-like environment without `dangerouslyAllowBrowser`.
 */
export class ChatServiceClient implements AsyncDisposable {
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
  readonly #defaults: CallDefaults
  /** Set on a derived client: closes it without closing the pool it borrows. */
  readonly #ownClosing: AbortController | undefined
  /** Aborted when this client is closed, or a client it derives from. */
  readonly #closing: AbortSignal

  /**
   * @param options - See {@link ClientOptions}. `baseUrl`, `keyId` and `keySecret` default to the
   * environment variables `CHAT_SERVICE_BASE_URL`, `CHAT_SERVICE_KEY_ID`, `CHAT_SERVICE_KEY_SECRET`.
   */
  constructor(options?: ClientOptions)
  constructor(options: ClientOptions | Derivation = {}) {
    if (options instanceof Derivation) {
      const { parent, overrides } = options
      this.#transport = parent.transport
      this.baseUrl = parent.baseUrl
      this.keyId = parent.keyId
      this.#defaults = mergeDefaults(parent.defaults, overrides)
      this.#ownClosing = new AbortController()
      // Closed with its parent (and so with the pool's owner), or on its own.
      const closing = AbortSignal.any([parent.closing, this.#ownClosing.signal])
      this.#closing = closing
      const pipeline = new RequestPipeline(this.#transport, settingsFor(this.#defaults, this.#transport.redactor, closing))
      ;[this.auth, this.customerUsers, this.agents, this.conversations] = resources(pipeline)
      return
    }
    refuseBrowser(options)
    const [valid] = checkArguments('new ChatServiceClient', [clientOptionsSchema, options])
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
    this.#defaults = mergeDefaults(
      {
        timeout: DEFAULT_TIMEOUT_MS,
        maxRetries: DEFAULT_MAX_RETRIES,
        headers: {},
        logger: console,
        logLevel: logLevel.level,
        maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
        responseValidation: 'strict',
        compression: true,
      },
      { ...valid, logLevel: logLevel.level },
    )
    this.#transport = new Transport({
      origin: base.origin,
      prefix: base.prefix,
      keyId,
      keySecret,
      redactor,
      dispatcher: valid.dispatcher,
      connections: valid.connections ?? DEFAULT_CONNECTIONS,
      connectTimeout: this.#defaults.timeout,
    })
    this.baseUrl = base.href
    this.keyId = keyId
    this.#ownClosing = undefined
    this.#closing = this.#transport.closing
    const settings = settingsFor(this.#defaults, redactor, this.#closing)
    const pipeline = new RequestPipeline(this.#transport, settings)
    ;[this.auth, this.customerUsers, this.agents, this.conversations] = resources(pipeline)

    if (logLevel.invalidEnv !== undefined && !warnedAboutLogEnv) {
      warnedAboutLogEnv = true
      settings.logger.log(
        'warn',
        `${LOG_ENV}=${logLevel.invalidEnv} is not a log level; using 'warn'. Valid values: off, error, warn, info, debug`,
      )
    }
    if (keySecret.length < MIN_SUBSTRING_SECRET_LENGTH) {
      settings.logger.log(
        'warn',
        `keySecret is only ${keySecret.length} characters long, too short to be a real key secret: check keySecret / ${ENVIRONMENT_VARIABLES.keySecret}. ` +
          `Secrets this short are scrubbed from messages only where they stand as a whole word.`,
      )
    }
  }

  /**
   * A client that makes its calls with other defaults (`timeout`, `maxRetries`, `headers`,
   * `logger`, `logLevel`, `maxResponseBytes`, `responseValidation`, `compression`), and shares
   * this client's service, key pair, connection pool, 429 pause and secret redaction. `headers` are
   * merged over this client's. Cheap: make one per use.
   *
   * ```ts
   * const patient = client.withOptions({ timeout: 120_000, maxRetries: 5 })
   * ```
   *
   * The pool belongs to the client constructed with `new`. `close()` on a derived client ends that
   * client and the clients derived from it (their later calls and retry waits reject with
   * ChatServiceError); `close()` on the client that owns the pool closes it for every client
   * derived from it, which then reject new calls the same way.
   * @throws RequestValidationError for an option that cannot be changed here (`baseUrl`, `keyId`,
   * `keySecret`, `dispatcher`, `connections`, ...) or an invalid value.
   */
  withOptions(overrides: ClientOverrides): ChatServiceClient {
    const [valid] = checkArguments({ operation: 'client.withOptions', redactor: this.#transport.redactor }, [
      clientOverridesSchema,
      overrides,
    ])
    const parent = {
      transport: this.#transport,
      baseUrl: this.baseUrl,
      keyId: this.keyId,
      defaults: this.#defaults,
      closing: this.#closing,
    }
    return new ChatServiceClient(new Derivation(parent, valid) as ClientOptions)
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

  /** Same as {@link ChatServiceClient.close}; lets you write `await using client = new ChatServiceClient(...)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** `{ baseUrl, keyId, keySecret: '[REDACTED]' }`: safe to log. */
  toJSON(): { baseUrl: string; keyId: string; keySecret: string } {
    return { baseUrl: this.baseUrl, keyId: this.keyId, keySecret: REDACTED }
  }

  /** @internal util.inspect shows the same safe view as {@link ChatServiceClient.toJSON}. */
  [inspect.custom](): string {
    return `ChatServiceClient ${inspect(this.toJSON())}`
  }
}

function resources(pipeline: RequestPipeline): [Auth, CustomerUsers, Agents, Conversations] {
  return [createAuth(pipeline), createCustomerUsers(pipeline), createAgents(pipeline), createConversations(pipeline)]
}

function refuseBrowser(options: ClientOptions): void {
  const browserLike =
    typeof (globalThis as { window?: unknown }).window !== 'undefined' ||
    typeof (globalThis as { document?: unknown }).document !== 'undefined'
  if (browserLike && (options as ClientOptions | undefined)?.dangerouslyAllowBrowser !== true) {
    throw new ChatServiceError(
      'ChatServiceClient refuses to run where `window` or `document` exists: the key secret must stay on your server (spec, Authentication 4). ' +
        'Issue chat tokens on the server and send only the token to the browser, or pass dangerouslyAllowBrowser: true if this really is a server.',
    )
  }
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
  if (issues.length > 0) throw new RequestValidationError('new ChatServiceClient', issues)
  return resolved
}

/** Says where a bad `baseUrl` came from when it came from the environment. */
function fromVariable(issue: ValidationIssue, given: ClientOptions['baseUrl']): ValidationIssue {
  return given === undefined ? { ...issue, message: `${issue.message} (from ${ENVIRONMENT_VARIABLES.baseUrl})` } : issue
}

/** `base` with every override that is given; `headers` are merged, not replaced. */
function mergeDefaults(base: CallDefaults, overrides: ClientOverrides): CallDefaults {
  return {
    timeout: overrides.timeout ?? base.timeout,
    maxRetries: overrides.maxRetries ?? base.maxRetries,
    headers: overrides.headers === undefined ? base.headers : { ...base.headers, ...overrides.headers },
    logger: overrides.logger ?? base.logger,
    logLevel: overrides.logLevel ?? base.logLevel,
    maxResponseBytes: overrides.maxResponseBytes ?? base.maxResponseBytes,
    responseValidation: overrides.responseValidation ?? base.responseValidation,
    compression: overrides.compression ?? base.compression,
  }
}

function settingsFor(defaults: CallDefaults, redactor: Redactor, closing: AbortSignal): ClientSettings {
  return {
    timeout: defaults.timeout,
    maxRetries: defaults.maxRetries,
    maxResponseBytes: defaults.maxResponseBytes,
    headers: requestHeaders(defaults.headers, defaults.compression),
    compression: defaults.compression,
    logger: new SdkLogger(defaults.logger, defaults.logLevel, redactor),
    responseValidation: defaults.responseValidation,
    closing,
  }
}
