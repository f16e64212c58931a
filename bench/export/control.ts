// Parent side of the export server (bench/export/server-process.ts): start it, read and reset its
// counters between runs.
import { spawnJsonChild } from '../spawn.ts'
import type { ServerInfo } from '../fake.ts'
import type { ExpectedExport, NightlyExpected } from './dataset.ts'
import type { LinkStats } from './link-proxy.ts'
import type { ServerStats } from './server.ts'

export interface ExportServerInfo extends ServerInfo {
  /** The same server behind the emulated link (bench/export/link-proxy.ts). */
  linkUrl: string
  expected: ExpectedExport
  latencyMs: number
  link: { mbps: number; rttMs: number }
  startUpMs: number
  /** Night 2 of the nightly benchmark, when the server was started with `grow`. */
  nightly?: NightlyExpected
}

export interface ExportStats extends ServerStats {
  link: LinkStats
}

export interface SpawnedExportServer extends ExportServerInfo {
  stats(): Promise<ExportStats>
  reset(): Promise<void>
  /** Serves night 1 (the dataset) or night 2 (after `grow`) from now on. */
  night(n: 1 | 2): Promise<void>
  stop(): Promise<void>
}

export interface ExportServerArgs {
  conversations: number
  messages: number
  latencyMs: number
  linkMbps: number
  linkRttMs: number
  /** Makes night 2 of the nightly benchmark: this share of the conversations grows by 1 to `maxAdded` messages. */
  grow?: { fraction: number; maxAdded: number } | undefined
}

export async function spawnExportServer(args: ExportServerArgs): Promise<SpawnedExportServer> {
  const child = await spawnJsonChild<ExportServerInfo>(new URL('./server-process.ts', import.meta.url), [
    '--conversations',
    String(args.conversations),
    '--messages',
    String(args.messages),
    '--latency-ms',
    String(args.latencyMs),
    '--link-mbps',
    String(args.linkMbps),
    '--link-rtt-ms',
    String(args.linkRttMs),
    ...(args.grow === undefined ? [] : ['--grow-fraction', String(args.grow.fraction), '--grow-max-added', String(args.grow.maxAdded)]),
  ])
  const control = async (method: string, what = method === 'POST' ? 'reset' : 'stats'): Promise<ExportStats> => {
    const response = await fetch(`${child.info.url}/__bench/${what}`, { method })
    if (!response.ok) throw new Error(`export server: ${method} /__bench/${what}: ${response.status} ${await response.text()}`)
    return (await response.json()) as ExportStats
  }
  return {
    ...child.info,
    stats: () => control('GET'),
    reset: async () => {
      await control('POST')
    },
    night: async (n) => {
      await control('POST', `night/${n}`)
    },
    stop: () => child.stop(),
  }
}
