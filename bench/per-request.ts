// Per-request benchmark: one page of 20 agents, sequential and at 32 in flight, for the raw-undici
// floor, the SDK, the strict floor (a reference) and axios + zod (and, in the full run, the old
// floor as a labelled control), against one fake service in another process.
//
// Method (issue 32; bench/paired.ts): every contender in a process of its own; the floor and the
// SDK (or, with a baseline, the earlier SDK and today's) in ABBA half-blocks, many rounds; ratios
// per round, summarised as a geometric mean with a 95 % confidence interval; client CPU per call
// beside wall time. The other contenders follow the pair in each round, in another order each round.
import { pairedRun, type PairedConfig, type PairedFigures, type ProcessSpec } from './paired.ts'
import type { ServerInfo } from './fake.ts'

export interface PerRequestConfig extends PairedConfig {
  /** Also run the old floor of issue 5 (raw undici without `reset: false`), labelled as a control. */
  withOldFloor: boolean
}

/** The floor and the SDK (the pair), then the references: strict floor, axios + zod, the old floor. */
export function perRequest(server: ServerInfo, config: PerRequestConfig, log: (line: string) => void): Promise<PairedFigures[]> {
  const specs: ProcessSpec[] = [{ contender: 'floor' }, { contender: 'sdk' }, { contender: 'strict' }, { contender: 'axios' }]
  if (config.withOldFloor) specs.push({ contender: 'old-floor' })
  return pairedRun(server, specs, config, log)
}

/** An earlier build of the SDK (bench/baseline.ts made it in `dir`) against today's, as the pair. */
export function perRequestBaseline(
  server: ServerInfo,
  dir: string,
  config: PerRequestConfig,
  log: (line: string) => void,
): Promise<PairedFigures[]> {
  return pairedRun(server, [{ contender: `sdk-at:${dir}` }, { contender: 'sdk' }], config, log)
}
