// Negative type check of typed metadata (`customerUsers.withMetadata`), in the packed package
// (scripts/consumer/run.sh: ts-nodenext-esm, ts-nodenext-cjs, ts-bundler). As in misuse.ts, each
// statement after `// @ts-expect-error` must be a type error, else tsc fails with TS2578. This
// catches published types that lose the schema's types (metadata widened to `any` or to the
// untyped `Record<string, unknown>`, input and output swapped) or a `zod` the consumer's types
// do not resolve. `zod` comes from the package's own dependency, as a user's would. Never run.
/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- deliberate misuse */
import * as z from 'zod'
import type { ChatServiceClient } from 'chat-service-sdk'

declare const client: ChatServiceClient

const V1 = z.object({ version: z.literal(1), tier: z.string() })
const V2 = z.object({ version: z.literal(2), plan: z.object({ name: z.string(), seats: z.number() }) })
const Metadata = z.union([V2, V1.transform((v1) => ({ version: 2 as const, plan: { name: v1.tier, seats: 1 } }))])

export async function metadataMisuse(): Promise<unknown[]> {
  const users = client.customerUsers.withMetadata(Metadata, { forbiddenKeys: ['email'] })
  const user = (await users.list()).data[0]!
  // @ts-expect-error reads give the schema's output, the newest version: v1's `tier` is gone
  const tier = user.metadata.tier
  // @ts-expect-error seats is a number
  const seats: string = user.metadata.plan.seats
  // @ts-expect-error no such version
  await users.update(user.id, { metadata: { version: 3 } })
  // @ts-expect-error v2 needs plan.seats
  await users.update(user.id, { metadata: { version: 2, plan: { name: 'pro' } } })
  // @ts-expect-error untyped metadata does not fit a typed resource
  await users.update(user.id, { metadata: {} as Record<string, unknown> })
  // @ts-expect-error the callback gets the output: `tier` is not on it
  await users.updateMetadata('ext-1', (current) => ({ version: 1, tier: current.tier }))
  // @ts-expect-error the callback returns the schema's input: plan is an object
  await users.updateMetadata('ext-1', (current) => ({ ...current, plan: 'pro' }))
  // @ts-expect-error findByExternalId resolves with null when no user has this external id
  const found: { id: string } = await users.findByExternalId('ext-1')
  // @ts-expect-error forbiddenKeys is a list
  const oneKey = client.customerUsers.withMetadata(V2, { forbiddenKeys: 'email' })
  // @ts-expect-error withMetadata takes a zod schema, not an example object
  const notSchema = client.customerUsers.withMetadata({ version: 2 })
  // @ts-expect-error without withMetadata, metadata stays Record<string, unknown> | null
  const untyped: { version: number } = (await client.customerUsers.list()).data[0]!.metadata
  return [tier, seats, found, oneKey, notSchema, untyped]
}
