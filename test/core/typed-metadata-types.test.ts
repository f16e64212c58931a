/**
 * The types of typed metadata (issue 13), checked by `npm run typecheck` (tsconfig includes
 * test/): what `withMetadata(schema)` reads is typed `z.output<typeof schema>`, what it writes
 * must be `z.input<typeof schema>`, and `client.customerUsers` without it keeps
 * `Record<string, unknown> | null`. `expectTypeOf` fails the type check when a type drifts; each
 * `// @ts-expect-error` line is a misuse that must NOT compile (if it ever does, the unused
 * directive is itself an error, TS2578). The functions below are type-checked, never called: at
 * run time vitest only sees that they exist. Behaviour is tested in typed-metadata.test.ts; the
 * packed package's types get the same misuses in scripts/consumer/fixtures/metadata-misuse.ts.
 */
/* eslint-disable @typescript-eslint/no-unused-vars, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- deliberate misuse: the bindings exist to be type errors */
import { describe, expectTypeOf, it } from 'vitest'
import * as z from 'zod'
import type {
  APIPromise,
  ChatServiceClient,
  CustomerUser,
  CustomerUserPage,
  CustomerUserUpdateFields,
  CustomerUserUpdateParams,
  resources,
  PagePromise,
  UpdatedCustomerUser,
} from 'chat-service-sdk'

const V1 = z.object({ version: z.literal(1), tier: z.enum(['free', 'gold']) })
const V2 = z.object({
  version: z.literal(2),
  plan: z.object({ name: z.enum(['free', 'gold', 'pro']), seats: z.number() }),
  flags: z.array(z.string()).default([]),
})
const Versioned = z.union([V2, V1.transform((v1): z.output<typeof V2> => ({ version: 2, plan: { name: v1.tier, seats: 1 }, flags: [] }))])

/** What reads give: only the newest version (`flags` always there, the default applied). */
type Out = { version: 2; plan: { name: 'free' | 'gold' | 'pro'; seats: number }; flags: string[] }
/** What updates take: either version (`flags` optional in v2, since the schema defaults it). */
type In =
  | { version: 2; plan: { name: 'free' | 'gold' | 'pro'; seats: number }; flags?: string[] | undefined }
  | { version: 1; tier: 'free' | 'gold' }

function typedUsers(client: ChatServiceClient) {
  return client.customerUsers.withMetadata(Versioned, { forbiddenKeys: ['email'] })
}
type TypedUsers = ReturnType<typeof typedUsers>

describe('withMetadata(schema)', () => {
  it('the schema of this file: output is the newest version, input either version', () => {
    expectTypeOf<z.output<typeof Versioned>>().toEqualTypeOf<Out>()
    expectTypeOf<z.input<typeof Versioned>>().toEqualTypeOf<In>()
  })

  it('returns the customer-users resource typed by the schema', () => {
    expectTypeOf(typedUsers).returns.toEqualTypeOf<resources.CustomerUsers<Out, In>>()
  })

  it('list() items have metadata: z.output of the schema, on a page and when iterated', () => {
    expectTypeOf<TypedUsers['list']>().returns.toEqualTypeOf<PagePromise<CustomerUser<Out>, CustomerUserPage<Out>>>()
    async function read(users: TypedUsers): Promise<void> {
      const page = await users.list()
      expectTypeOf(page.data).items.toHaveProperty('metadata').toEqualTypeOf<Out>()
      for await (const user of users.list()) expectTypeOf(user.metadata).toEqualTypeOf<Out>()
    }
    expectTypeOf(read).toBeFunction()
  })

  it('update() takes metadata: z.input of the schema and returns metadata: z.output', () => {
    expectTypeOf<TypedUsers['update']>().parameter(1).toEqualTypeOf<CustomerUserUpdateFields<In>>()
    expectTypeOf<TypedUsers['update']>().returns.toEqualTypeOf<APIPromise<UpdatedCustomerUser<Out>>>()
    // Both versions are accepted, and v2 without the defaulted `flags`.
    expectTypeOf<{ metadata: { version: 1; tier: 'gold' } }>().toExtend<Parameters<TypedUsers['update']>[1]>()
    expectTypeOf<{ metadata: { version: 2; plan: { name: 'pro'; seats: 3 } } }>().toExtend<Parameters<TypedUsers['update']>[1]>()
  })

  it('findByExternalId() resolves with one user typed by the schema, or null', () => {
    expectTypeOf<TypedUsers['findByExternalId']>().returns.toEqualTypeOf<APIPromise<CustomerUser<Out> | null>>()
    expectTypeOf<ChatServiceClient['customerUsers']['findByExternalId']>().returns.toEqualTypeOf<APIPromise<CustomerUser | null>>()
  })

  it("updateMetadata's callback gets z.output and returns z.input (or a promise of it)", () => {
    type Callback = Parameters<TypedUsers['updateMetadata']>[1]
    expectTypeOf<Callback>().toEqualTypeOf<(current: Out) => In | PromiseLike<In>>()
    expectTypeOf<Callback>().parameter(0).toEqualTypeOf<Out>()
    expectTypeOf<TypedUsers['updateMetadata']>().returns.toEqualTypeOf<Promise<UpdatedCustomerUser<Out> | undefined>>()
    // An upgrade inside the callback is fine: a v1 object is valid input.
    expectTypeOf<(current: Out) => { version: 1; tier: 'free' }>().toExtend<Callback>()
  })

  it('a .nullable() schema lets metadata be null on read, not on write (metadata sent must be a JSON object)', () => {
    const nullable = (client: ChatServiceClient) => client.customerUsers.withMetadata(V2.nullable())
    type Users = ReturnType<typeof nullable>
    expectTypeOf<Awaited<ReturnType<Users['list']>>['data'][number]['metadata']>().toEqualTypeOf<z.output<typeof V2> | null>()
    expectTypeOf<null>().not.toExtend<Parameters<Users['updateMetadata']>[1] extends (c: never) => infer R ? R : never>()
    expectTypeOf<{ metadata: null }>().not.toExtend<Parameters<Users['update']>[1]>()
  })
})

describe('update() with changes computed at run time (issue 18)', () => {
  // Each function is type-checked only: it must compile (this project has exactOptionalPropertyTypes).
  it('a { name?, email? } object built up member by member type-checks, plain and typed', () => {
    async function computed(client: ChatServiceClient, users: TypedUsers, row: { name?: string; email?: string }): Promise<void> {
      const changes: { name?: string; email?: string } = {}
      if (row.name !== undefined) changes.name = row.name
      if (row.email !== undefined) changes.email = row.email
      await client.customerUsers.update('cu_1', changes)
      await users.update('cu_1', changes)
    }
    expectTypeOf(computed).toBeFunction()
  })

  it('members typed `| undefined` (a wrapper forwarding its own optional inputs) type-check, metadata included', () => {
    async function forwarded(
      client: ChatServiceClient,
      users: TypedUsers,
      name: string | undefined,
      metadata: In | undefined,
      plain: Record<string, unknown> | undefined,
    ): Promise<void> {
      const changes: { name: string | undefined; email?: string | undefined } = { name }
      await client.customerUsers.update('cu_1', changes)
      await client.customerUsers.update('cu_1', { ...changes, metadata: plain })
      await users.update('cu_1', { name, email: undefined, metadata })
      const partial: Partial<CustomerUserUpdateFields<In>> = metadata === undefined ? {} : { metadata }
      await users.update('cu_1', partial)
    }
    expectTypeOf(forwarded).toBeFunction()
  })

  it('the at-least-one form, CustomerUserUpdateParams, is still accepted (and still refuses {} at compile time)', () => {
    expectTypeOf<CustomerUserUpdateParams<In>>().toExtend<Parameters<TypedUsers['update']>[1]>()
    expectTypeOf<CustomerUserUpdateParams>().toExtend<Parameters<ChatServiceClient['customerUsers']['update']>[1]>()
    expectTypeOf({}).not.toExtend<CustomerUserUpdateParams>()
    // `{}` itself compiles for update(); it is refused at run time (RequestValidationError, nothing sent).
    expectTypeOf({}).toExtend<Parameters<ChatServiceClient['customerUsers']['update']>[1]>()
  })
})

describe('client.customerUsers without withMetadata', () => {
  it('keeps metadata: Record<string, unknown> | null on reads, Record<string, unknown> on writes', () => {
    expectTypeOf<ChatServiceClient['customerUsers']>().toEqualTypeOf<resources.CustomerUsers>()
    expectTypeOf<CustomerUser['metadata']>().toEqualTypeOf<Record<string, unknown> | null>()
    expectTypeOf<Awaited<ReturnType<ChatServiceClient['customerUsers']['list']>>['data'][number]['metadata']>().toEqualTypeOf<Record<
      string,
      unknown
    > | null>()
    expectTypeOf<ChatServiceClient['customerUsers']['update']>().parameter(1).toEqualTypeOf<CustomerUserUpdateFields>()
    expectTypeOf<Parameters<ChatServiceClient['customerUsers']['updateMetadata']>[1]>().toEqualTypeOf<
      (current: Record<string, unknown> | null) => Record<string, unknown> | PromiseLike<Record<string, unknown>>
    >()
  })
})

/** Never called: every statement after a `// @ts-expect-error` must be a type error. */
async function misuses(client: ChatServiceClient, users: TypedUsers): Promise<unknown[]> {
  const page = await users.list()
  const user = page.data[0]!
  // @ts-expect-error reads give only the newest version: v1's `tier` is not there
  const tier = user.metadata.tier
  // @ts-expect-error the output's plan name is one of the enum's values, not any string
  const planName: 'enterprise' = user.metadata.plan.name
  // @ts-expect-error no such version
  await users.update(user.id, { metadata: { version: 3 } })
  // @ts-expect-error v2 needs plan.seats
  await users.update(user.id, { metadata: { version: 2, plan: { name: 'pro' } } })
  // @ts-expect-error v1's tier is 'free' or 'gold'
  await users.update(user.id, { metadata: { version: 1, tier: 'platinum' } })
  // @ts-expect-error untyped metadata does not fit a typed resource
  await users.update(user.id, { metadata: {} as Record<string, unknown> })
  const stray = { nickname: 'x' }
  // @ts-expect-error a computed object with none of update()'s members (TS2559: nothing in common)
  await users.update(user.id, stray)
  const numbered: { name?: number } = {}
  // @ts-expect-error nor a wrongly typed member
  await client.customerUsers.update(user.id, numbered)
  // @ts-expect-error the callback gets the output: `tier` is not on it
  await users.updateMetadata('ext-1', (current) => ({ version: 1, tier: current.tier }))
  // @ts-expect-error the callback returns the input shape: plan is an object
  await users.updateMetadata('ext-1', (current) => ({ ...current, plan: 'pro' }))
  // @ts-expect-error nor a promise of a wrong shape
  await users.updateMetadata('ext-1', async () => ({ version: 3 }))
  // @ts-expect-error the callback's parameter is the output type, not v1
  await users.updateMetadata('ext-1', (current: z.output<typeof V1>) => current)
  // @ts-expect-error findByExternalId resolves with null when no user matches
  const maybe: CustomerUser<Out> = await users.findByExternalId('ext-1')
  // @ts-expect-error the result is undefined when no user matches
  const updated: UpdatedCustomerUser<Out> = await users.updateMetadata('ext-1', (current) => current)
  // @ts-expect-error forbiddenKeys is a list
  const oneKey = client.customerUsers.withMetadata(V2, { forbiddenKeys: 'email' })
  // @ts-expect-error withMetadata takes a zod schema, not an example object
  const notSchema = client.customerUsers.withMetadata({ version: 2 })
  const plain = await client.customerUsers.list()
  // @ts-expect-error without withMetadata, metadata is Record<string, unknown> | null
  const untyped: { plan: string } = plain.data[0]!.metadata
  return [tier, planName, maybe, updated, oneKey, notSchema, untyped]
}

it('the misuses above are type errors (checked by npm run typecheck)', () => {
  expectTypeOf(misuses).returns.toEqualTypeOf<Promise<unknown[]>>()
})
