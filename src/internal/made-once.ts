/**
 * `make()`, made on first use and kept. For zod schemas that the common path does not need: a
 * schema built at module level is paid for by every process that imports the SDK (building zod
 * objects, and the first use of each zod API compiling zod's own code), whether or not it ever
 * uses it.
 */
export function madeOnce<T>(make: () => T): () => T {
  let made: T | undefined
  return () => (made ??= make())
}
