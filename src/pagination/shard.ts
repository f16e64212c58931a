// Shards: one export split over many workers by conversation id, so that the split stays correct
// whatever the service's list order does between workers (each worker scans the whole list and
// keeps its own conversations). (A line comment: a module's doc block would be kept by the
// declaration bundler above the next declaration, documenting nothing: scripts/check-dts.ts.)
import * as z from 'zod'
import type { SchemaOf } from '../schemas/common.ts'
import { madeOnce } from '../schemas/made-once.ts'

/**
 * `crypto.hash`, loaded on first use: importing `node:crypto` as a module makes Node load the whole
 * module's exports (its Web Crypto among them), a cost every process importing the SDK would pay.
 */
const sha256 = madeOnce(() => process.getBuiltinModule('node:crypto').hash)

/**
 * One shard of a split export: shard `index` of `count` (`0 <= index < count`). A conversation
 * belongs to shard {@link shardOf}`(id, count)`.
 */
export type Shard = {
  /** This worker's shard, from 0 to `count - 1` (a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`). */
  index: number
  /** How many shards the export is split into, 1 to 65,536. */
  count: number
}

/** Most shards an export may be split into. */
export const MAX_SHARDS = 65_536

/**
 * The shard (0 to `count - 1`) the conversation `id` belongs to when an export is split into
 * `count` shards: the first 4 bytes of the SHA-256 digest of the id's UTF-8 bytes, read as a
 * big-endian unsigned integer, modulo `count`. Stable: it never changes within a major version of
 * this SDK, and is easy to compute in any language. Shards are disjoint and together cover every
 * conversation, and spread conversations evenly whatever their ids look like.
 *
 * ```ts
 * shardOf('conv_42', 8) // always the same number from 0 to 7
 * ```
 * @throws RangeError when `count` is not an integer from 1 to 65,536 (a programming error, as
 * `new Array(-1)` is).
 */
export function shardOf(id: string, count: number): number {
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS) {
    throw new RangeError(`shardOf: count must be an integer from 1 to ${MAX_SHARDS}, received ${String(count)}`)
  }
  // crypto.hash: the same digest as createHash('sha256').update(id).digest(), in one call (about
  // 40 % less time per id, which a shard's scan pays for every conversation listed).
  return sha256()('sha256', id, 'buffer').readUInt32BE(0) % count
}

/** @internal */
export const shardSchema = madeOnce(() =>
  z
    .strictObject({
      index: z.number().int().min(0),
      count: z.number().int().min(1).max(MAX_SHARDS),
    } satisfies SchemaOf<Shard>)
    .refine((shard) => shard.index < shard.count, { message: 'Expected index < count (shards are numbered from 0)', path: ['index'] }),
)

/** Whether a conversation id belongs to a shard. @internal */
export interface ShardFilter extends Readonly<Shard> {
  has(id: string): boolean
}

/** The filter of a checked shard, or `undefined` for none (every conversation). @internal */
export function shardFilter(shard: Shard | undefined): ShardFilter | undefined {
  if (shard === undefined || shard.count === 1) return undefined
  const { index, count } = shard
  return { index, count, has: (id) => shardOf(id, count) === index }
}
