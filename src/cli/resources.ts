/**
 * The commands that read or change one kind of record (`agents list`, `users find|list|update`,
 * `token issue`, `conversations list`, `messages list`), each on the SDK's public API only, and
 * how their results look as a table.
 *
 * @module
 */
import type {
  Agent,
  ChatServiceClient,
  Conversation,
  CustomerUser,
  CustomerUserUpdateParams,
  IssueTokenResponse,
  Message,
  UpdatedCustomerUser,
} from 'chat-service-sdk'
import { MAX_LIMIT } from 'chat-service-sdk'
import {
  expiresInOption,
  formatOption,
  integerOption,
  metadataOption,
  requiredOption,
  stringOption,
  UsageError,
  type Values,
} from './args.ts'
import { commandName, type CommandSpec, type Format } from './commands.ts'
import { listWriter, writeSingle, type Column, type Stdout } from './output.ts'

/** What a command runs with. */
export interface CommandContext {
  readonly client: ChatServiceClient
  readonly command: CommandSpec
  readonly positionals: readonly string[]
  readonly values: Values
  readonly out: Stdout
  /** Writes a line of text for the person running the command (stderr). */
  readonly note: (text: string) => void
  /** Fires on Ctrl-C, SIGTERM, or when stdout's reader goes away. */
  readonly signal: AbortSignal
}

const AGENT_COLUMNS: readonly Column<Agent>[] = [
  { header: 'id', value: (agent) => agent.id },
  { header: 'name', value: (agent) => agent.name },
  { header: 'active', value: (agent) => agent.active },
  { header: 'updated_at', value: (agent) => agent.updated_at },
]
const USER_COLUMNS: readonly Column<CustomerUser>[] = [
  { header: 'id', value: (user) => user.id },
  { header: 'external_id', value: (user) => user.external_id },
  { header: 'name', value: (user) => user.name },
  { header: 'email', value: (user) => user.email },
  { header: 'active', value: (user) => user.active },
  { header: 'last_seen_at', value: (user) => user.last_seen_at },
]
const CONVERSATION_COLUMNS: readonly Column<Conversation>[] = [
  { header: 'id', value: (conversation) => conversation.id },
  { header: 'customer_user_id', value: (conversation) => conversation.customer_user_id },
  { header: 'message_count', value: (conversation) => conversation.message_count },
  { header: 'updated_at', value: (conversation) => conversation.updated_at },
  { header: 'title', value: (conversation) => conversation.title },
]
const MESSAGE_COLUMNS: readonly Column<Message>[] = [
  { header: 'created_at', value: (message) => message.created_at },
  { header: 'id', value: (message) => message.id },
  { header: 'role', value: (message) => message.role },
  { header: 'content', value: (message) => message.content },
]

/** The fields of one customer user, as the lines of a table. */
function userRows(user: CustomerUser | UpdatedCustomerUser): (readonly [string, unknown])[] {
  return Object.entries(user).map(([field, value]) => [field, value] as const)
}

/** The list format asked for, or the default: a table on a terminal, JSON Lines otherwise. */
function listFormat(context: CommandContext): Format {
  return formatOption(context.values, context.command) ?? (context.out.isTTY ? 'table' : 'jsonl')
}

/** The single-result format asked for, or the default: a table on a terminal, JSON otherwise. */
function singleFormat(context: CommandContext): Format {
  return formatOption(context.values, context.command) ?? (context.out.isTTY ? 'table' : 'json')
}

/**
 * Pages through `list` (started with `limit`), writing each item that `keep` accepts, until the
 * end or `--max-items`. Leaving the loop early sends nothing more (the SDK aborts what is in flight).
 */
async function writeList<T>(
  context: CommandContext,
  columns: readonly Column<T>[],
  list: (limit: number) => AsyncIterable<T>,
  keep?: (item: T) => boolean,
): Promise<void> {
  const format = listFormat(context)
  const maxItems = integerOption(context.values, 'max-items', 1, Number.MAX_SAFE_INTEGER, context.command)
  // No page larger than what is wanted: --max-items 5 asks for 5 items, not 100. A filter may need more.
  const limit = maxItems === undefined || keep !== undefined ? MAX_LIMIT : Math.min(MAX_LIMIT, maxItems)
  const writer = listWriter(format, columns, context.out)
  let written = 0
  for await (const item of list(limit)) {
    if (keep !== undefined && !keep(item)) continue
    await writer.item(item)
    written++
    if (written === maxItems || context.out.gone.aborted) break
  }
  await writer.end()
}

/** `agents list [--active]` */
async function agentsList(context: CommandContext): Promise<void> {
  const active = context.values['active'] === true
  await writeList(
    context,
    AGENT_COLUMNS,
    (limit) => context.client.agents.list({ limit }, { signal: context.signal }),
    active ? (agent) => agent.active : undefined,
  )
}

/** `users list [--name N] [--email E] [--external-id ID]` */
async function usersList(context: CommandContext): Promise<void> {
  const { values } = context
  const filters = {
    name: stringOption(values, 'name'),
    email: stringOption(values, 'email'),
    external_id: stringOption(values, 'external-id'),
  }
  await writeList(context, USER_COLUMNS, (limit) => context.client.customerUsers.list({ ...filters, limit }, { signal: context.signal }))
}

/** `users find --external-id ID`: exit status 1 when nobody has it. */
async function usersFind(context: CommandContext): Promise<void> {
  const externalId = requiredOption(context.values, 'external-id', context.command)
  const format = singleFormat(context)
  const user = await context.client.customerUsers.findByExternalId(externalId, { signal: context.signal })
  if (user === null) throw new NotFound(`no customer user has the external_id ${JSON.stringify(externalId)}`)
  await writeSingle(format, user, userRows(user), context.out)
}

/** `users update ID [--name N] [--email E] [--metadata JSON | --merge-metadata JSON]` */
async function usersUpdate(context: CommandContext): Promise<void> {
  const { values, command } = context
  const [id] = context.positionals as [string]
  const name = stringOption(values, 'name')
  const email = stringOption(values, 'email')
  const metadata = metadataOption(values, command)
  const merge = metadataOption(values, command, 'merge-metadata')
  if (merge !== undefined) {
    if (metadata !== undefined) {
      throw new UsageError('--metadata replaces the metadata and --merge-metadata merges into it: give one of them', command)
    }
    if (name !== undefined || email !== undefined) {
      throw new UsageError(
        '--merge-metadata goes alone (a read, then a write of the metadata): change --name and --email in another run',
        command,
      )
    }
    await mergeMetadata(context, id, merge)
    return
  }
  // The params type asks for at least one field: each branch proves one is there.
  const fields: CustomerUserUpdateParams | undefined =
    name !== undefined
      ? { name, email, metadata }
      : email !== undefined
        ? { name, email, metadata }
        : metadata !== undefined
          ? { name, email, metadata }
          : undefined
  if (fields === undefined) {
    throw new UsageError(`${commandName(command)} needs at least one of --name, --email, --metadata, --merge-metadata`, command)
  }
  const format = singleFormat(context)
  const updated = await context.client.customerUsers.update(id, fields, { signal: context.signal })
  await writeSingle(format, updated, userRows(updated), context.out)
}

/**
 * `users update ID --merge-metadata JSON`: the SDK's `updateMetadata` (a strict read of the
 * user's metadata by its external_id, then a write of the merged object), after paging through
 * the users for ID's external_id (the service has no lookup by internal id).
 */
async function mergeMetadata(context: CommandContext, id: string, merge: Record<string, unknown>): Promise<void> {
  const format = singleFormat(context)
  const { customerUsers } = context.client
  let externalId: string | undefined
  for await (const user of customerUsers.list({ limit: MAX_LIMIT }, { signal: context.signal })) {
    if (user.id !== id) continue
    externalId = user.external_id
    break // stops paging: nothing further is requested
  }
  if (externalId === undefined) throw new NotFound(`no customer user has the id ${JSON.stringify(id)}`)
  if (externalId === '') {
    throw new NotFound(
      `the customer user ${id} has an empty external_id, by which --merge-metadata finds it again to read and write its metadata: use --metadata with the whole object`,
    )
  }
  const updated = await customerUsers.updateMetadata(externalId, (current) => ({ ...current, ...merge }), { signal: context.signal })
  if (updated === undefined) {
    throw new NotFound(
      `the customer user ${id} was not found again by its external_id ${JSON.stringify(externalId)} (changed meanwhile?): nothing was written`,
    )
  }
  await writeSingle(format, updated, userRows(updated), context.out)
}

/** How long a token lives, as asked, and about when it expires by this machine's clock. */
function expiry(expiresIn: string, now: number): string {
  const amount = Number(expiresIn.slice(0, -1))
  const hours = expiresIn.endsWith('d') ? amount * 24 : amount
  const at = new Date(now + hours * 3_600_000)
  return `in ${expiresIn}, about ${at.toISOString().replace(/\.\d+Z$/, 'Z')} by this machine's clock`
}

/** `token issue --user-id ID [--agent-id ID] [--expires-in 12h] [--show-token]` */
async function tokenIssue(context: CommandContext): Promise<void> {
  const { values, command, out } = context
  const userId = requiredOption(values, 'user-id', command)
  const agentId = stringOption(values, 'agent-id')
  const expiresIn = expiresInOption(values, command)
  const asked = formatOption(values, command)
  const showToken = !out.isTTY || values['show-token'] === true
  const issued: IssueTokenResponse = await context.client.auth.issueToken({ userId, agentId, expiresIn }, { signal: context.signal })
  const lifetime = expiresIn ?? '24h' // the service's default (spec, Endpoint 1)
  if (asked === undefined && !out.isTTY) {
    await out.write(`${issued.token}\n`) // `TOKEN=$(chat-service token issue ...)`
    return
  }
  const format = asked ?? 'table'
  const { token, user, agent } = issued
  const value = { ...(showToken ? { token } : {}), user, agent: agent ?? null, expiresIn: lifetime }
  const rows: (readonly [string, unknown])[] = [
    ...(showToken ? [['token', token] as const] : []),
    ['user.id', user.id],
    ['user.externalId', user.externalId],
    ['user.companyId', user.companyId],
    ['agent', agent == null ? 'none bound' : `${agent.name} (${agent.id}), ${agent.active ? 'active' : 'INACTIVE'}`],
    ['expires', expiry(lifetime, Date.now())],
  ]
  await writeSingle(format, value, rows, out)
  if (!showToken)
    context.note('the token is not shown on a terminal (it would stay in the scrollback): pipe the output, or pass --show-token')
}

/** `conversations list` */
async function conversationsList(context: CommandContext): Promise<void> {
  await writeList(context, CONVERSATION_COLUMNS, (limit) => context.client.conversations.list({ limit }, { signal: context.signal }))
}

/** `messages list CONVERSATION_ID` */
async function messagesList(context: CommandContext): Promise<void> {
  const [conversationId] = context.positionals as [string]
  await writeList(context, MESSAGE_COLUMNS, (limit) =>
    context.client.conversations.messages.list(conversationId, { limit }, { signal: context.signal }),
  )
}

/** A lookup that found nothing: exit status 1 with this message, nothing on stdout. */
export class NotFound extends Error {
  override readonly name = 'NotFound'
}

/** The commands of this module, by name. */
export const RESOURCE_COMMANDS: Readonly<Record<string, (context: CommandContext) => Promise<void>>> = {
  'agents list': agentsList,
  'users find': usersFind,
  'users list': usersList,
  'users update': usersUpdate,
  'token issue': tokenIssue,
  'conversations list': conversationsList,
  'messages list': messagesList,
}
