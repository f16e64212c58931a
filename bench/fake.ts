// Parent side of bench/fake-process.ts: starts the fake service in a child process.
import { spawnJsonChild } from './spawn.ts'

/** Where a benchmark server listens and the key pair it accepts. */
export interface ServerInfo {
  url: string
  keyId: string
  keySecret: string
  /** The first conversation of the dataset. */
  conversationId: string
}

export interface SpawnedFake extends ServerInfo {
  stop(): Promise<void>
}

/** Starts the fake (built package) with `args` (see bench/fake-process.ts) in a child process. */
export async function spawnFake(args: readonly string[] = []): Promise<SpawnedFake> {
  const child = await spawnJsonChild<ServerInfo>(new URL('./fake-process.ts', import.meta.url), args)
  return { ...child.info, stop: () => child.stop() }
}
