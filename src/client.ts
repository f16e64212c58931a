import { inspect } from 'node:util'
import { resolveLogLevel, SdkLogger } from './core/logger.ts'
import {
  clientOptionsSchema,
  DEFAULT_CONNECTIONS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type ClientOptions,
} from './core/options.ts'
import { REDACTED, Redactor } from './core/redact.ts'
import { Transport } from './core/transport.ts'
import { resolveBaseUrl } from './core/url.ts'
import { parseParams } from './core/validate.ts'
import { ChatServiceError, RequestValidationError } from './errors/index.ts'
import { Agents } from './resources/agents.ts'
import { Auth } from './resources/auth.ts'
import { Conversations } from './resources/conversations.ts'
import { CustomerUsers } from './resources/customer-users.ts'

/**
 * Client of the Chat Service management API (spec: the whole document), for company servers only.
 *
 * ```ts
 * const client = new ChatServiceClient({ baseUrl, keyId, keySecret })
 * const { token } = await client.auth.issueToken({ userId: 'u-42', agentId })
 * for await (const user of client.customerUsers.list({ limit: 100 })) { ... }
 * await client.close()
 * ```
 *
 * Every request goes to exactly one `/rest/v1` prefix and carries `keyId` and `keySecret` as members
 * of a JSON body (GET included), never in a header or the URL. The client owns a keep-alive
 * connection pool; release it with {@link ChatServiceClient.close} or `await using`.
 *
 * @throws RequestValidationError from the constructor when an option is missing or invalid (an
 * empty `keyId`, a `baseUrl` that is not http(s), an `http:` URL on a non-loopback host without
 * `allowInsecureHttp`, ...); ChatServiceError when constructed in a browser-like environment
 * without `dangerouslyAllowBrowser`.
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

  constructor(options: ClientOptions) {
    const browserLike =
      typeof (globalThis as { window?: unknown }).window !== 'undefined' ||
      typeof (globalThis as { document?: unknown }).document !== 'undefined'
    if (browserLike && (options as ClientOptions | undefined)?.dangerouslyAllowBrowser !== true) {
      throw new ChatServiceError(
        'ChatServiceClient refuses to run where `window` or `document` exists: the key secret must stay on your server (spec, Authentication 4). ' +
          'Issue chat tokens on the server and send only the token to the browser, or pass dangerouslyAllowBrowser: true if this really is a server.',
      )
    }
    const valid = parseParams(clientOptionsSchema, options, 'new ChatServiceClient')
    const base = resolveBaseUrl(valid.baseUrl)
    if (Array.isArray(base)) throw new RequestValidationError('new ChatServiceClient', base)
    if (base.origin.startsWith('http:') && !base.loopback && valid.allowInsecureHttp !== true) {
      throw new RequestValidationError('new ChatServiceClient', [
        {
          path: ['baseUrl'],
          code: 'invalid_format',
          message:
            'Refusing http: on a non-loopback host: the key secret would cross the network in clear text. Use https:, or pass allowInsecureHttp: true',
        },
      ])
    }
    const redactor = new Redactor(valid.keySecret)
    const logger = new SdkLogger(valid.logger ?? console, resolveLogLevel(valid.logLevel, process.env['CHAT_SERVICE_LOG']), redactor)
    this.#transport = new Transport({
      origin: base.origin,
      prefix: base.prefix,
      keyId: valid.keyId,
      keySecret: valid.keySecret,
      timeout: valid.timeout ?? DEFAULT_TIMEOUT_MS,
      maxRetries: valid.maxRetries ?? DEFAULT_MAX_RETRIES,
      headers: valid.headers ?? {},
      connections: valid.connections ?? DEFAULT_CONNECTIONS,
      maxResponseBytes: valid.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      dispatcher: valid.dispatcher,
      redactor,
      logger,
    })
    this.baseUrl = base.href
    this.keyId = valid.keyId
    this.auth = new Auth(this.#transport)
    this.customerUsers = new CustomerUsers(this.#transport)
    this.agents = new Agents(this.#transport)
    this.conversations = new Conversations(this.#transport)
  }

  /**
   * Releases the client's own connection pool once in-flight requests finish. A `dispatcher` you
   * passed in is yours and stays open. Later calls reject with ChatServiceError. Idempotent.
   */
  close(): Promise<void> {
    return this.#transport.close()
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
