// What the SDK build under test can do, found by trying it against the export server (not by
// version numbers): whether listAll exists, which encoding its default requests get, whether
// `compression: false` exists, and whether it decodes gzip-only and br-only responses (asked for by
// a dispatcher that sets accept-encoding: bench/export/force-encoding.ts). Contenders that need a
// missing feature print "n/a (<reason>)" instead of failing the run.
import { floorAgent } from '../floor.ts'
import { listAllOf, sdkClient, type Target } from './contenders.ts'
import type { SpawnedExportServer } from './control.ts'
import { forceAcceptEncoding } from './force-encoding.ts'
import type { Encoding } from './server.ts'

/** Client options of one way to configure the SDK's compression, and what to close after. */
export interface SdkSetup {
  readonly extra: Record<string, unknown>
  release(): Promise<void>
}

/** A way to configure the SDK's compression. */
export interface SdkMode {
  readonly label: string
  setup(): SdkSetup
  /** Encoding the server must answer with for the mode to count as working; undefined: any (the SDK's default). */
  readonly wants: Encoding | undefined
}

const plain = (extra: Record<string, unknown>): SdkSetup => ({ extra, release: async () => undefined })
const forced = (encoding: Encoding): SdkSetup => {
  const agent = floorAgent()
  return { extra: { dispatcher: forceAcceptEncoding(agent, encoding) }, release: () => agent.close() }
}

export const SDK_MODES = {
  default: { label: 'SDK default', setup: () => plain({}), wants: undefined },
  off: { label: 'compression: false', setup: () => plain({ compression: false }), wants: 'identity' },
  gzip: { label: 'gzip only', setup: () => forced('gzip'), wants: 'gzip' },
  br: { label: 'br only', setup: () => forced('br'), wants: 'br' },
} as const satisfies Record<string, SdkMode>

export type ModeKey = keyof typeof SDK_MODES
export type ModeResult = { ok: true; encoding: Encoding } | { ok: false; reason: string }

export interface SdkFeatures {
  listAll: boolean
  modes: Record<ModeKey, ModeResult>
}

/** One request per mode through `target`; the server's counters tell which encoding it answered with. */
export async function probeSdk(server: SpawnedExportServer, target: Target): Promise<SdkFeatures> {
  const modes = {} as Record<ModeKey, ModeResult>
  let hasListAll = false
  for (const [key, mode] of Object.entries(SDK_MODES) as [ModeKey, SdkMode][]) {
    const setup = mode.setup()
    let client
    try {
      client = sdkClient(target, setup.extra)
    } catch (error) {
      modes[key] = { ok: false, reason: `the SDK refuses the option (${describe(error)})` }
      await setup.release()
      continue
    }
    hasListAll ||= listAllOf(client) !== undefined
    try {
      await server.reset()
      await client.conversations.list({ limit: 100 })
      const served = Object.keys((await server.stats()).byEncoding) as Encoding[]
      const encoding = served[0] ?? 'identity'
      modes[key] =
        served.length === 1 && (mode.wants === undefined || mode.wants === encoding)
          ? { ok: true, encoding }
          : { ok: false, reason: `the server answered ${served.join(', ')}, not ${mode.wants ?? 'one encoding'}` }
    } catch (error) {
      modes[key] = { ok: false, reason: `the SDK cannot read the ${mode.wants ?? ''} response (${describe(error)})` }
    } finally {
      await client.close()
      await setup.release()
    }
  }
  return { listAll: hasListAll, modes }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const first = error.message.split('\n')[0] ?? ''
  return `${error.name}: ${first.length > 80 ? `${first.slice(0, 80)}…` : first}`
}
