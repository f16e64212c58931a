// Parent side of the export server (bench/export/server-process.ts): start it, read and reset its
// counters between runs.
import { spawnJsonChild } from '../spawn.ts'
import type { ServerInfo } from '../fake.ts'
import type { ExpectedExport } from './dataset.ts'
import type { LinkStats } from './link-proxy.ts'
import type { ServerStats } from './server.ts'

export interface ExportServerInfo extends ServerInfo {
  /** The same server behind the emulated link (bench/export/link-proxy.ts). */
  linkUrl: string
  expected: ExpectedExport
  latencyMs: number
  link: { mbps: number; rttMs: number }
  startUpMs: number
}

export interface ExportStats extends ServerStats {
  link: LinkStats
}

export interface SpawnedExportServer extends ExportServerInfo {
  stats(): Promise<ExportStats>
  reset(): Promise<void>
  stop(): Promise<void>
}

export interface ExportServerArgs {
  conversations: number
  messages: number
  latencyMs: number
  linkMbps: number
  linkRttMs: number
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
  ])
  const control = async (method: string): Promise<ExportStats> => {
    const response = await fetch(`${child.info.url}/__bench/${method === 'POST' ? 'reset' : 'stats'}`, { method })
    return (await response.json()) as ExportStats
  }
  return {
    ...child.info,
    stats: () => control('GET'),
    reset: async () => {
      await control('POST')
    },
    stop: () => child.stop(),
  }
}
