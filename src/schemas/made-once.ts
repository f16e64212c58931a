/**
 * `make()`, made on first use and kept. For every zod schema of the SDK: a schema built at module
 * level is paid for by every process that imports the SDK (building zod objects, and the first use
 * of each zod API compiling zod's own code: about 50 M instructions for the SDK's schemas, more
 * than a sixth of what importing undici and zod costs), whether or not it ever makes that call.
 * Made once, a schema costs its first call only; later calls read the kept value (one closure call).
 * @internal
 */
export function madeOnce<T>(make: () => T): () => T {
  let made: T | undefined
  return () => (made ??= make())
}
