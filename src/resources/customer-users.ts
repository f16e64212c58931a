import * as z from 'zod'
import { createAPIPromise, type APIPromise } from '../core/api-promise.ts'
import type { APIResponse, WithResponse } from '../core/response.ts'
import { ENDPOINTS } from '../endpoints.ts'
import { defineOperation, type Operation } from '../internal/operation.ts'
import type { ListRequestOptions, RequestOptions } from '../core/options.ts'
import { requestOptionsSchema } from '../internal/options-schema.ts'
import type { RequestPipeline } from '../internal/pipeline.ts'
import { DuplicateExternalIdError, formatIssues, type ResponseValidationError, type ValidationIssue } from '../errors/errors.ts'
import { toIssues } from '../internal/issues.ts'
import type { PageSource } from '../pagination/iterate.ts'
import { defineList, listPages, type ListOperation, type PageContext } from '../pagination/list.ts'
import { bindPageSource, Page } from '../pagination/page.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { MAX_LIMIT, type Pagination, type SchemaOf } from '../schemas/common.ts'
import { madeOnce } from '../schemas/made-once.ts'
import {
  customerUserListParamsSchema,
  customerUserSchemaWith,
  customerUserUpdateParamsSchemaWith,
  metadataSchema,
  updatedCustomerUserSchemaWith,
  type CustomerUser,
  type CustomerUserListParams,
  type CustomerUserMetadata,
  type CustomerUserUpdateFields,
  type UpdatedCustomerUser,
} from '../schemas/customer-user.ts'
import { jsonObjectSchema, MAX_JSON_DEPTH, walkableSchema } from '../schemas/json.ts'

/** Options of `customerUsers.withMetadata(schema, options)`. */
export type MetadataOptions = {
  /**
   * Keys that must never be sent in metadata, at any depth, compared case-insensitively (e.g.
   * `['email', 'password', 'token']`: the spec says not to store secrets or personal data there).
   * An update whose metadata holds one is refused with RequestValidationError naming its path,
   * before anything is sent. Reads are not checked. Default: none.
   */
  forbiddenKeys?: readonly string[] | undefined
  /**
   * What a listing does with a stored user whose metadata your schema rejects (`list`, its pages
   * and iteration, `findByExternalId`, `updateMetadata`'s read):
   * - `'throw'` (default): the page fails with ResponseValidationError, its issues at
   *   `data.N.metadata…` (the whole iteration ends there);
   * - `'skip'`: the user is left out of `page.data` and of iteration, and reported: listed in
   *   {@link CustomerUserPage.skipped} (id, external_id, index, issues), passed to `onSkip`, and
   *   logged at `warn` (one line per user: its id and the issues, secrets scrubbed). The other
   *   users of the page are returned. `pagination` stays as the service sent it, so a page may
   *   hold fewer users than `limit` (and than `total` implies).
   *
   * Under `responseValidation: 'warn'` a user with invalid metadata is skipped and reported
   * whichever you choose: it is never returned as sent, so every item is the schema's output, as
   * its type says. Only a list's items are skipped; `update`'s result is a single user (see
   * `withMetadata`).
   */
  onInvalidMetadata?: 'throw' | 'skip' | undefined
  /**
   * Called once for each user left out of a page (see `onInvalidMetadata`), when the page
   * arrives (with `prefetch`, before its users are reached: a loop that stops early may have been
   * told of users on pages it never reached, and of a page the paging rules then refuse): count
   * them, collect them for a report, or throw to end the listing with your error. Default: none (the `warn` log line and
   * `page.skipped` still report them).
   */
  onSkip?: ((skipped: SkippedCustomerUser) => void) | undefined
}

/**
 * A customer user left out of a page because its metadata does not match your `withMetadata`
 * schema (`onInvalidMetadata: 'skip'`, or `responseValidation: 'warn'`).
 */
export interface SkippedCustomerUser {
  /** The user's internal id (as sent; its text if the service sent something else). */
  readonly id: string
  /** The user's `external_id` (as sent; its text if the service sent something else). */
  readonly external_id: string
  /** Its position in the page's `data` as the service sent it (0-based). */
  readonly index: number
  /**
   * What your schema found, paths from the user (`['metadata', 'plan']`), secrets scrubbed. A
   * union that no branch matched says why each branch failed (`ValidationIssue.branches`).
   */
  readonly issues: readonly ValidationIssue[]
}

/** Makes a {@link CustomerUserPage} (internal: its constructor is private; see src/internal/README.md). */
let createCustomerUserPage: <M>(
  body: { data: CustomerUser<M>[]; pagination: Pagination },
  response: APIResponse,
  source: PageSource<CustomerUserPage<M>>,
  skipped: readonly SkippedCustomerUser[],
) => CustomerUserPage<M>

/** The error `findByExternalId` throws for a skipped user, given what it means for the caller: made with the page. */
const skippedErrors = new WeakMap<SkippedCustomerUser, (lead: string) => ResponseValidationError>()

/**
 * One page of customer users (spec, Endpoint 2): a {@link Page} that also lists the users left out
 * of it because their metadata does not match your `withMetadata` schema.
 * @typeParam Metadata - The type of `metadata` of the users in `data`.
 */
export class CustomerUserPage<Metadata = Record<string, unknown> | null> extends Page<CustomerUser<Metadata>> {
  /**
   * The users the service sent on this page that are not in `data`: their metadata does not match
   * your schema (`withMetadata(schema, { onInvalidMetadata: 'skip' })`, or
   * `responseValidation: 'warn'`). Empty otherwise, and always empty without `withMetadata`.
   */
  readonly skipped: readonly SkippedCustomerUser[]

  static {
    createCustomerUserPage = (body, response, source, skipped) => bindPageSource(new CustomerUserPage(body, response, skipped), source)
  }

  private constructor(
    body: { data: CustomerUser<Metadata>[]; pagination: Pagination },
    response: APIResponse,
    skipped: readonly SkippedCustomerUser[],
  ) {
    super(body, response)
    this.skipped = skipped
  }
}

/** What a typed listing does with users whose metadata the schema rejects. */
interface MetadataCheck {
  readonly schema: z.ZodType
  readonly onInvalid: 'throw' | 'skip'
}

/**
 * The users of a page (as the service sent it) with their metadata read by the schema: each is
 * returned with the schema's output as its metadata. A user whose metadata the schema rejects:
 * - `onInvalid: 'throw'` under `responseValidation: 'strict'`: the page fails with one
 *   ResponseValidationError holding the issues of every such user, at `data.N.metadata…`;
 * - otherwise (`'skip'`, or `'warn'`, where returning it as sent would hand back a value its type
 *   does not describe): it is left out of the users, logged at `warn` (one line per user: its
 *   index, id and issues, secrets scrubbed) and listed in the page's `skipped`.
 */
function readMetadata<M>(
  body: { data: CustomerUser<unknown>[] },
  context: PageContext<unknown>,
  check: MetadataCheck,
): { data: CustomerUser<M>[]; skipped: SkippedCustomerUser[] } {
  const data: CustomerUser<M>[] = []
  const failed: { index: number; user: unknown; issues: ValidationIssue[] }[] = []
  body.data.forEach((user: unknown, kept) => {
    // Its place in the page as the service sent it (an iteration may hand over only some of its users).
    const index = context.positions?.[kept] ?? kept
    const value = user !== null && typeof user === 'object' ? (user as { metadata?: unknown }).metadata : undefined
    const parsed = check.schema.safeParse(value)
    if (parsed.success) data.push({ ...(user as CustomerUser<unknown>), metadata: parsed.data as M })
    else {
      const issues = toIssues(parsed.error.issues).map((issue) => ({ ...issue, path: ['metadata', ...issue.path] }))
      failed.push({ index, user, issues: context.scrub(issues) })
    }
  })
  const at = (index: number, issues: readonly ValidationIssue[]): ValidationIssue[] =>
    issues.map((issue) => ({ ...issue, path: ['data', index, ...issue.path] }))
  if (failed.length > 0 && check.onInvalid === 'throw' && context.validation === 'strict') {
    throw context.invalid(failed.flatMap(({ index, issues }) => at(index, issues)))
  }
  const why = check.onInvalid === 'skip' ? `onInvalidMetadata: 'skip'` : `responseValidation: 'warn'`
  const skipped = failed.map(({ index, user, issues }): SkippedCustomerUser => {
    const { id, external_id: externalId } = (user ?? {}) as { id?: unknown; external_id?: unknown }
    context.warn(
      `${context.operation}: left out data.${index} (id ${String(id)}): its metadata does not match your schema (${why}): ${formatIssues(issues)}`,
      { operation: context.operation, index, id, issues },
    )
    const entry: SkippedCustomerUser = { id: String(id), external_id: String(externalId), index, issues }
    skippedErrors.set(entry, (lead) => context.invalid([{ path: ['data', index], code: 'custom', message: lead }, ...at(index, issues)]))
    return entry
  })
  return { data, skipped }
}

/** A customer-user list operation (its pages are {@link CustomerUserPage}s). */
type CustomerUserList<Metadata> = ListOperation<
  z.ZodType,
  { data: CustomerUser<Metadata>[]; pagination: Pagination },
  CustomerUserPage<Metadata>
>

/** The operations of customer users, for one metadata schema. */
interface CustomerUserOperations<Metadata, MetadataInput> {
  readonly list: CustomerUserList<Metadata>
  /** The list endpoint as `findByExternalId` reads it (its own name in errors, logs and traces). */
  readonly find: CustomerUserList<Metadata>
  readonly update: Operation<z.ZodType<unknown, CustomerUserUpdateFields<MetadataInput>>, UpdatedCustomerUser<Metadata>>
  /** Told of each user a page leaves out (`onSkip`). */
  readonly onSkip: ((skipped: SkippedCustomerUser) => void) | undefined
}

/** The SDK methods that list customer users. */
const LIST_NAMES = { list: 'customerUsers.list', find: 'customerUsers.findByExternalId' } as const

/**
 * The lists of `withMetadata`, made once without their member check and page factory (each
 * `withMetadata` adds its own): their response schema, any metadata, is then compiled once, not
 * at every `withMetadata` call.
 */
const typedLists = {
  list: typedList(LIST_NAMES.list),
  find: typedList(LIST_NAMES.find),
}

function typedList(name: string): CustomerUserList<unknown> {
  return defineList({
    endpoint: ENDPOINTS.listCustomerUsers,
    name,
    params: customerUserListParamsSchema,
    item: () => customerUserSchemaWith(z.unknown()),
  })
}

/**
 * The operations, reading metadata with `read` and sending what `write` outputs. Without `typed`,
 * bodies are returned as the service sent them (checked). With it, list pages are checked with any
 * metadata and then each user's metadata with `read` (its output returned, the users it rejects
 * thrown or skipped per `onInvalid`), and update results are returned as the schema's output.
 */
function customerUserOperations<Metadata, MetadataInput>(
  read: () => z.ZodType<Metadata>,
  write: () => z.ZodType,
  typed?: { readonly onInvalid: 'throw' | 'skip'; readonly onSkip: ((skipped: SkippedCustomerUser) => void) | undefined },
): CustomerUserOperations<Metadata, MetadataInput> {
  const onSkip = typed?.onSkip
  const check: MetadataCheck | undefined = typed === undefined ? undefined : { schema: read(), onInvalid: typed.onInvalid }
  const page = (
    body: { data: CustomerUser<Metadata>[]; pagination: Pagination },
    response: APIResponse,
    context: PageContext<CustomerUserPage<Metadata>>,
  ): CustomerUserPage<Metadata> => {
    // Without typed metadata, the page is as sent; with it, each user's metadata is read by the schema.
    const read = check === undefined ? { data: body.data, skipped: [] } : readMetadata<Metadata>(body, context, check)
    const made = createCustomerUserPage({ ...body, data: read.data }, response, context.source, read.skipped)
    if (onSkip !== undefined) for (const skipped of made.skipped) onSkip(skipped)
    return made
  }
  const list = (name: 'list' | 'find'): CustomerUserList<Metadata> => {
    if (typed === undefined) {
      return defineList({
        endpoint: ENDPOINTS.listCustomerUsers,
        name: LIST_NAMES[name],
        params: customerUserListParamsSchema,
        item: () => customerUserSchemaWith(read()),
        page,
      })
    }
    // The page is checked with any metadata (one schema for every withMetadata); each user's metadata is then read by the schema.
    return (typedLists[name] as unknown as CustomerUserList<Metadata>).with({ page })
  }
  return {
    list: list('list'),
    find: list('find'),
    update: defineOperation({
      endpoint: ENDPOINTS.updateCustomerUser,
      params: () => customerUserUpdateParamsSchemaWith(write()) as z.ZodType<unknown, CustomerUserUpdateFields<MetadataInput>>,
      response: () => updatedCustomerUserSchemaWith(read()),
      output: typed === undefined ? 'as-sent' : 'parsed',
    }),
    onSkip,
  }
}

/** Without `withMetadata`: metadata is any JSON object (or null), returned as sent. */
const defaultOperations = customerUserOperations<CustomerUserMetadata, Record<string, unknown>>(metadataSchema, jsonObjectSchema)

/**
 * The operations for a caller's metadata schema: reads return the schema's output (so a schema
 * that upgrades an old version hands back the newest shape); updates send the schema's output,
 * which must be a plain JSON object, without forbidden keys.
 */
function operationsFor<S extends z.ZodType>(schema: S, options: MetadataOptions): CustomerUserOperations<z.output<S>, z.input<S>> {
  const typed = { onInvalid: options.onInvalidMetadata ?? 'throw', onSkip: options.onSkip }
  const forbidden = new Set((options.forbiddenKeys ?? []).map((key) => key.toLowerCase()))
  const refuseForbidden = (metadata: unknown, ctx: z.RefinementCtx): void => {
    if (forbidden.size === 0) return
    for (const path of keyPaths(metadata, (key) => forbidden.has(key.toLowerCase()), [])) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `"${String(path.at(-1))}" is a forbidden metadata key (forbiddenKeys): it must not be stored in metadata`,
      })
    }
  }
  // Forbidden keys are refused in what you give (even where your schema would strip them) and in
  // what is sent: the schema's output, which must be a plain JSON object. A `__proto__` key is
  // refused before the schema sees it: zod leaves it out of the objects it outputs.
  const toSend = walkableSchema()
    .superRefine(refuseProtoKeys('write'))
    .superRefine(refuseForbidden)
    .pipe(schema)
    .pipe(jsonObjectSchema() as unknown as z.ZodType<Record<string, unknown>, z.output<S>>)
    .superRefine(refuseForbidden)
  // Reads: a stored `__proto__` key is an issue at its path, not a key the output silently lacks
  // (which `updateMetadata` would then write back without it).
  const toRead = z.unknown().superRefine(refuseProtoKeys('read')).pipe(schema) as unknown as z.ZodType<z.output<S>>
  return customerUserOperations<z.output<S>, z.input<S>>(
    () => toRead,
    () => toSend,
    typed,
  )
}

/**
 * Refuses every `__proto__` key in metadata, at its path. `JSON.parse` makes such a key a plain
 * own property (untyped metadata keeps it), but zod leaves it out of every object it outputs (it
 * will not assign it, which would set the prototype), so a schema of yours would drop it
 * silently: on a read, and so on the next write.
 */
function refuseProtoKeys(when: 'read' | 'write'): (metadata: unknown, ctx: z.RefinementCtx) => void {
  const message =
    when === 'write'
      ? 'a "__proto__" key cannot go through a withMetadata schema (zod drops it from its output): refused rather than lost'
      : 'a "__proto__" key cannot go through a withMetadata schema (zod drops it from its output, and the next write would erase it): read this user without withMetadata, which returns metadata as sent'
  return (metadata, ctx) => {
    for (const path of keyPaths(metadata, (key) => key === '__proto__', [])) ctx.addIssue({ code: 'custom', path, message })
  }
}

/**
 * Paths of every object key in `value` that `matches`, at any depth up to `MAX_JSON_DEPTH`. A
 * cycle, or deeper nesting, is not followed (the JSON checks report them).
 */
function keyPaths(
  value: unknown,
  matches: (key: string) => boolean,
  path: (string | number)[],
  ancestors: Set<object> = new Set(),
): (string | number)[][] {
  if (value === null || typeof value !== 'object' || ancestors.has(value) || path.length >= MAX_JSON_DEPTH) return []
  ancestors.add(value)
  const found: (string | number)[][] = []
  for (const [key, item] of Object.entries(value)) {
    const at = [...path, Array.isArray(value) ? Number(key) : key]
    if (!Array.isArray(value) && matches(key)) found.push(at)
    found.push(...keyPaths(item, matches, at, ancestors))
  }
  ancestors.delete(value)
  return found
}

/**
 * `withMetadata`'s schema argument: a zod 4 schema (of any zod 4 copy, classic or mini: what the
 * SDK calls is zod 4's core, `_zod.run`). Anything else would fail only at the first list, with a
 * TypeError from inside zod; a zod 3 schema (no `_zod`) is named as one.
 */
const metadataSchemaArgument = madeOnce(() =>
  z.custom<z.ZodType>((value) => typeof (value as { _zod?: { run?: unknown } } | null | undefined)?._zod?.run === 'function', {
    error: (issue) =>
      typeof issue.input === 'object' &&
      issue.input !== null &&
      '_def' in issue.input &&
      typeof (issue.input as { safeParse?: unknown }).safeParse === 'function'
        ? 'Expected a zod 4 schema, got a zod 3 one: install zod 4 (npm install zod@4) and build the schema with it'
        : 'Expected a zod 4 schema of your metadata (import * as z from "zod"; z.object({ ... }))',
  }),
)

/**
 * An external id as `findByExternalId` and `updateMetadata` take it: what the `external_id` filter
 * takes (a non-empty string; it travels in the JSON body, not the path).
 */
const externalIdArgs = madeOnce(() => z.strictObject({ externalId: z.string().min(1, 'Expected a non-empty external id') }))

/** Makes `client.customerUsers` (internal: the class's constructor is private, see src/internal/README.md). */
export let createCustomerUsers: (pipeline: RequestPipeline) => CustomerUsers

/**
 * The company's customer users (spec, Endpoints 2 and 3). Reach it as `client.customerUsers`, or
 * typed by your metadata schema as `client.customerUsers.withMetadata(schema)`.
 * @typeParam Metadata - The type of `metadata` in what reads and updates return.
 * @typeParam MetadataInput - The type of `metadata` an update accepts.
 */
export class CustomerUsers<Metadata = Record<string, unknown> | null, MetadataInput = Record<string, unknown>> {
  readonly #pipeline: RequestPipeline
  readonly #operations: CustomerUserOperations<Metadata, MetadataInput>

  static {
    createCustomerUsers = (pipeline) => new CustomerUsers(pipeline)
  }

  private constructor(pipeline: RequestPipeline, operations?: CustomerUserOperations<Metadata, MetadataInput>) {
    this.#pipeline = pipeline
    this.#operations = operations ?? (defaultOperations as unknown as CustomerUserOperations<Metadata, MetadataInput>)
  }

  /**
   * Lists customer users: `GET /rest/v1/customer-users?page&limit` (spec, Endpoint 2). `page` and
   * `limit` travel in the query string; the filters `name`, `email` and `external_id` travel in
   * the JSON body. `external_id` is the recommended lookup.
   * @param params - `page` (default 1), `limit` (1–100, default 20), optional filters.
   * @param options - {@link ListRequestOptions} of this call (each page's request; `prefetch` and `rescan` for iteration).
   * @returns A {@link PagePromise} of {@link CustomerUserPage}s: await it for one page, `for await`
   * it for every user. Under `withMetadata(schema, { onInvalidMetadata: 'skip' })` (or
   * `responseValidation: 'warn'`) users whose metadata the schema rejects are left out of
   * `page.data` and of iteration and listed in `page.skipped`; `pagination` is as the service sent it.
   * @throws RequestValidationError for bad params (nothing sent); AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError (also for
   * metadata your `withMetadata` schema refuses, under `onInvalidMetadata: 'throw'` and
   * `responseValidation: 'strict'`: issues at `data.N.metadata…`); whatever your `onSkip` throws;
   * ChatServiceError once the client is closed; while iterating, UnstableListError for a list that will not hold still.
   */
  list(params: CustomerUserListParams = {}, options?: ListRequestOptions): PagePromise<CustomerUser<Metadata>, CustomerUserPage<Metadata>> {
    return listPages(this.#pipeline, this.#operations.list, {}, params, options)
  }

  /**
   * Updates a customer user: `PUT /rest/v1/customer-users/:id` (spec, Endpoint 3). Only the fields
   * given are sent. Whether `metadata` is merged or replaced is not shown by the spec: send the
   * full object to keep existing keys (or use {@link resources.CustomerUsers.updateMetadata}).
   *
   * `params` may be built up at run time: any `{ name?, email?, metadata? }` object type-checks
   * (members may be `undefined`, which means "not given"). An update with nothing to change (`{}`,
   * or every member `undefined`) is refused with RequestValidationError before anything is sent.
   *
   * ```ts
   * const changes: { name?: string; email?: string } = {}
   * if (row.name !== user.name) changes.name = row.name
   * if (Object.keys(changes).length > 0) await client.customerUsers.update(user.id, changes)
   * ```
   * @param id - The internal customer user `id` (not the external id); percent-encoded as one segment.
   * @param params - At least one of `name`, `email` (non-empty strings), `metadata` (a plain JSON
   * object; with `withMetadata`, checked by your schema, and its output is what is sent).
   * @param options - {@link RequestOptions} of this call.
   * @returns An {@link APIPromise} of the updated user: id, external_id, name, email, metadata, active, updated_at.
   * @throws RequestValidationError (nothing sent): an empty update (no member given, or all
   * `undefined`), an empty name or email, metadata that is not a plain JSON object (or that your
   * schema refuses); NotFoundError (404: no such user in this company), AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError;
   * ChatServiceError once the client is closed.
   */
  update(
    id: string,
    params: CustomerUserUpdateFields<NonNullable<MetadataInput>>,
    options?: RequestOptions,
  ): APIPromise<UpdatedCustomerUser<Metadata>> {
    return this.#pipeline.call(this.#operations.update, { id }, params, options)
  }

  /**
   * The one customer user whose `external_id` is exactly `externalId` (spec, Endpoint 2: "Filtering
   * by `external_id` is the recommended lookup"), or `null` when there is none. It reads EVERY page
   * of the `external_id` filter, 100 users a page, and keeps only exact matches: the spec does not
   * say whether the service's filter matches exactly or partially, so `ext-1` never finds `ext-10`.
   * Typed by your schema under {@link resources.CustomerUsers.withMetadata}.
   *
   * ```ts
   * const user = await client.customerUsers.findByExternalId('crm-4711') // CustomerUser | null
   * const { data, response } = await client.customerUsers.findByExternalId('crm-4711').withResponse()
   * ```
   *
   * `.withResponse()` gives the response of the LAST page read: the one that ended the search
   * (`page === total_pages`), which for the usual single-page answer is the only response. Its
   * `requestId` is the one to quote when the answer looks wrong.
   * @param externalId - The calling system's own user id, compared exactly (case and whitespace included).
   * @param options - {@link RequestOptions} of this call, for every page request.
   * @returns An {@link APIPromise} of the user (fields as in `list`), or `null`.
   * @throws DuplicateExternalIdError when several users have this `external_id` (its `ids` lists
   * them, every page of the filter read; at most 1,000, the lookup stops there);
   * ResponseValidationError naming the user (its id
   * and external_id, then its issues at `data.N.metadata…`) when the user exists but its metadata
   * does not match your `withMetadata` schema (under `onInvalidMetadata: 'skip'` or
   * `responseValidation: 'warn'` it is not "no such user"); RequestValidationError for an empty
   * `externalId` or bad options (nothing sent); the errors of `list` for any page:
   * AuthenticationError (401), BadRequestError (400), InternalServerError (500), RateLimitError
   * (429) once retries run out, APIConnectionError, APITimeoutError, APIUserAbortError,
   * ResponseValidationError; ChatServiceError once the client is closed.
   */
  findByExternalId(externalId: string, options?: RequestOptions): APIPromise<CustomerUser<Metadata> | null> {
    return createAPIPromise(this.#findByExternalId(externalId, options))
  }

  /**
   * This resource typed and checked by your zod schema of `metadata` (spec, Resources: Customer
   * user, "Metadata guidance"). Reads (`list`, the result of `update`) check each user's metadata
   * with it and return its output, typed `z.output<typeof schema>`: a schema that accepts an old
   * version and transforms it into the newest returns the newest shape. A listed user whose
   * metadata does not match fails the page with ResponseValidationError
   * (`onInvalidMetadata: 'throw'`, the default), or is left out of the page and reported (`'skip'`: `page.skipped`,
   * `onSkip`, a `warn` log line; also under `responseValidation: 'warn'`, so that every item is
   * the schema's output). `update`'s result is one user: one that does not match is a
   * ResponseValidationError (the update was made), or under `responseValidation: 'warn'` a
   * warning, and then its metadata is returned AS SENT, not as the schema's output, whatever the
   * type says. `update` checks the metadata you give with the schema before
   * anything is sent and sends its OUTPUT (an old version you pass is upgraded before it is
   * written), which must be a plain JSON object; the schema must accept its own output. A key
   * named `__proto__`, at any depth, is refused on both sides (RequestValidationError on update,
   * ResponseValidationError on read): zod leaves it out of its output, so it would be lost.
   *
   * ```ts
   * const Metadata = z.union([V2, V1.transform(upgrade)])
   * const users = client.customerUsers.withMetadata(Metadata, { forbiddenKeys: ['password'] })
   * for await (const user of users.list()) user.metadata // z.output<typeof Metadata>
   * ```
   * @param schema - A zod schema of your metadata. Allow `null` (`.nullable()`) if some users have none.
   * @param options - `forbiddenKeys`: keys refused in metadata before sending;
   * `onInvalidMetadata` (`'throw'`, default, or `'skip'`) and `onSkip`: what a listing does with a
   * user whose metadata the schema rejects (see `resources.MetadataOptions`).
   * @throws RequestValidationError when `schema` is not a zod 4 schema, `forbiddenKeys` not a list
   * of strings, `onInvalidMetadata` neither `'throw'` nor `'skip'`, or `onSkip` not a function.
   */
  withMetadata<S extends z.ZodType>(schema: S, options: MetadataOptions = {}): CustomerUsers<z.output<S>, z.input<S>> {
    const [, valid] = this.#pipeline.check(
      'customerUsers.withMetadata',
      [metadataSchemaArgument(), schema, ['schema']],
      [
        z.strictObject({
          forbiddenKeys: z.array(z.string().min(1)).optional(),
          onInvalidMetadata: z.enum(['throw', 'skip']).optional(),
          onSkip: z
            .custom<(skipped: SkippedCustomerUser) => void>((value) => typeof value === 'function', { message: 'Expected a function' })
            .optional(),
        } satisfies SchemaOf<MetadataOptions>),
        options,
        ['options'],
      ],
    )
    return new CustomerUsers(this.#pipeline, operationsFor(schema, valid))
  }

  /**
   * Read-modify-write of one user's metadata, found by `external_id` with
   * {@link resources.CustomerUsers.findByExternalId} (exact match, every page of the filter): calls `update`
   * with its current metadata and sends what it returns as the new metadata. Use it to change some
   * keys and keep the others, since the spec does not say whether an update merges or replaces
   * metadata. The read is checked strictly whatever `responseValidation` says: what is read is
   * written back.
   *
   * NOT ATOMIC: the spec shows no concurrency control, so a write by someone else between the read
   * and the write is lost. Run it from one place per user, or accept last-writer-wins.
   *
   * ```ts
   * await users.updateMetadata('ext-42', (metadata) => ({ ...metadata, plan: 'pro' }))
   * ```
   * @param externalId - The user's `external_id`, compared exactly.
   * @param update - Gets the current metadata (typed and checked by `withMetadata`'s schema, if
   * any) and returns (or resolves with) the new one.
   * @param options - {@link RequestOptions} of this call, for every request.
   * @returns The updated user, or `undefined` when no user has this `external_id` (nothing is sent then).
   * @throws DuplicateExternalIdError when more than one user has this `external_id` (nothing is
   * written; `ids` lists them);
   * ResponseValidationError when the user's stored metadata does not match your schema (under
   * `onInvalidMetadata: 'skip'` too: the error names the user; nothing is written); otherwise the
   * errors of `findByExternalId` and `update`, and whatever `update` throws.
   */
  async updateMetadata(
    externalId: string,
    update: (current: Metadata) => NonNullable<MetadataInput> | PromiseLike<NonNullable<MetadataInput>>,
    options?: RequestOptions,
  ): Promise<UpdatedCustomerUser<Metadata> | undefined> {
    this.#pipeline.check(
      'customerUsers.updateMetadata',
      [externalIdArgs(), { externalId }],
      [requestOptionsSchema(), options ?? {}, ['options']],
    )
    // Read strictly whatever responseValidation says: what is read is written back.
    const user = await this.findByExternalId(externalId, { ...options, responseValidation: 'strict' })
    if (user === null) return undefined
    const next = await update(user.metadata)
    return this.update(user.id, { metadata: next }, options)
  }

  /**
   * Reads every page of the `external_id` filter, 100 users a page, keeping the users whose
   * `external_id` is exactly `externalId`; resolves with the one found (or `null`) and the
   * response of the last page read.
   */
  async #findByExternalId(externalId: string, options: RequestOptions | undefined): Promise<WithResponse<CustomerUser<Metadata> | null>> {
    const operation = this.#operations.find
    try {
      this.#pipeline.check(operation.name, [externalIdArgs(), { externalId }], [requestOptionsSchema(), options ?? {}, ['options']])
    } catch (error) {
      return this.#pipeline.refuse(operation, error)
    }
    let found: CustomerUser<Metadata> | undefined
    // Distinct ids: a user a page shift shows twice is one user, not a duplicate.
    const ids = new Set<string>()
    let response: APIResponse | undefined
    // A look-up a person waits on: every page of it is interactive, unless the call says otherwise.
    const lookup = { ...options, priority: options?.priority ?? 'interactive' }
    const pages = listPages(this.#pipeline, operation, {}, { external_id: externalId, limit: MAX_LIMIT }, lookup).pages()
    for await (const page of pages) {
      response = page.response
      for (const user of page.data) {
        if (user.external_id !== externalId) continue
        found ??= user
        ids.add(user.id)
      }
      // A user left out for its metadata is there all the same: never "no such user".
      const invalid = page.skipped.find((user) => user.external_id === externalId)
      if (invalid !== undefined) throw invalidMetadata(invalid, operation.name)
      // Enough to resolve by hand; a service that lists more need not be read to its end.
      if (ids.size >= MAX_DUPLICATE_IDS) throw this.#notUnique(externalId, [...ids].slice(0, MAX_DUPLICATE_IDS), true)
    }
    // Read to the end even after a second match: the error lists every one.
    if (ids.size > 1) throw this.#notUnique(externalId, [...ids], false)
    // The loop has read at least the first page (a failure throws out of it).
    return { data: found ?? null, response: response as APIResponse }
  }

  /** The error of a lookup by `external_id` that found several users: what it holds scrubbed of secrets, as every error's. */
  #notUnique(externalId: string, ids: string[], truncated: boolean): DuplicateExternalIdError {
    return new DuplicateExternalIdError({ externalId: this.#pipeline.scrub(externalId), ids: this.#pipeline.scrub(ids), truncated })
  }
}

/** The most ids a {@link DuplicateExternalIdError} collects: the lookup stops reading pages there. */
const MAX_DUPLICATE_IDS = 1_000

/** The error of a lookup by `external_id` whose user is there but was left out for its metadata. */
function invalidMetadata(user: SkippedCustomerUser, operation: string): ResponseValidationError {
  const error = skippedErrors.get(user) as (lead: string) => ResponseValidationError
  return error(
    `customer user ${user.id} (external_id ${JSON.stringify(user.external_id)}) exists, but its metadata does not match your ` +
      `withMetadata schema, so ${operation} cannot return it: fix the stored metadata (or the schema)`,
  )
}
