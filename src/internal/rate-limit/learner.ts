/**
 * The send rate a client allows itself once the service has refused a request with 429: learned
 * from what the service accepted, lowered on each 429, raised again while requests succeed. Pure
 * arithmetic over times in ms (no timers, no I/O), so that the pacer, the shared store and the
 * simulation (bench/pacing/simulate.ts) all read the same rule.
 *
 * The rule (CUBIC's shape, with the growth scaled to the rate rather than to packets):
 *
 * - Unpaced until the first 429: {@link RateLearner.rate} is `undefined` and nothing is counted
 *   but the accepted requests of the last {@link WINDOW_MS}.
 * - A 429 for a request sent more than {@link SETTLE_MS} after the last decrease (or after this
 *   process adopted one another process made) sets `max` to the rate found: the first, what the
 *   service accepted before it; later ones, the rate sent, or what the service accepted in the last
 *   second the client was not paused if that is less (all processes of a store counted), less
 *   {@link FOUND_MARGIN}.
 * - It starts the rate again at `β × max`: β is {@link BETA}, or {@link BETA_AFTER_PAUSE} when its
 *   `Retry-After` was long enough to lengthen the climb (over 150 ms).
 * - A 429 for a request sent before the last decrease or within {@link SETTLE_MS} after it says
 *   nothing new (it was sent at the old rate, or before the lower one could show) and lowers
 *   nothing, as TCP makes one reduction per round trip.
 * - Processes sharing a store: the first 429's estimate is the larger of what this process had
 *   accepted and what all of them had (the store's `acceptedPerSecond`), so that N workers do not
 *   start from one worker's share; raised to that count when the store answers it later, while the
 *   429's `Retry-After` lasts ({@link RateLearner.raiseFirstEstimate}).
 * - A 429 that ends probing (the first estimate was a lower bound, and the rate doubled each
 *   half second since) takes as where the limit was met the least of the rate averaged over the
 *   last doubling (or since probing began, if that was sooner) and the limit that explains what
 *   the service accepted in the probe's last second, whose rate is known ({@link probeLimit}: the
 *   count itself up to {@link PROBE_FOUND_CAP} times it).
 * - While requests succeed the rate climbs back as `max × (1 + (1 − β) × ((t − K) / K)³)`, `t`
 *   the time since the decrease, or since the end of the wait the 429 asked for (a paused client
 *   learns nothing, and a climb timed through a 1 s `Retry-After` came out of it two
 *   doublings higher, into the next 429): steep at first, flat near `max` (where the limit was found), then
 *   probing past it ever faster, so a limit that was raised is found again. It reaches `max` again
 *   after `K` = {@link RECOVERY_MS}.
 * - Never above twice what the client actually sent in the last window (so an idle client does
 *   not build up a rate it never tried), never below {@link MIN_RATE}.
 * - Unpaced again after {@link UNPACE_AFTER_MS} without a 429. The limit found is remembered for
 *   {@link REMEMBER_MS} (as is one another process found, read from the store): the next first 429
 *   climbs from `BETA` × it to it in {@link RECOVERY_MS} and on past it, instead of probing up from
 *   what was accepted (a probe half the limit on average, for a second or two); the next 429 then
 *   measures the limit again. Unless it is below what the service accepted just before that 429,
 *   which shows it stale.
 *
 * Why this shape (measured in BENCHMARKS.md, "Pacing"): AIMD's linear climb spends most of each
 * cycle well below the limit (about 0.85 of it on average with `BETA` 0.7), and its climb time
 * grows with the rate; a cubic climb scaled to `max` spends most of the cycle near the limit
 * found, whatever its size, and a first estimate that was too low is left behind in a few
 * seconds.
 */

import type { LearnedRate } from '../../core/options.ts'

export type { LearnedRate }

/** What a 429 did to the rate. */
export type Refusal =
  /** The first 429 of an episode: the rate was lowered. */
  | { readonly kind: 'lowered'; readonly learned: LearnedRate }
  /** A 429 for a request sent more than {@link SETTLE_MS} after the rate was lowered, with none sent after it accepted yet: the service accepts nothing right now (a closed window). Back off in time; the rate found stays. */
  | { readonly kind: 'closed' }
  /** A 429 for a request sent before the last decrease or within {@link SETTLE_MS} after it: it was sent at the old rate, or before the lower one could show, and says nothing new. */
  | { readonly kind: 'stale' }

/** The rate after a decrease, as a share of the rate the service accepted. */
export const BETA = 0.8
/**
 * The same after a decrease that paused the client long enough to lengthen its climb (a
 * `Retry-After` over {@link RECOVERY_MS} / {@link RECOVERY_PER_PAUSE}): the pause has already let
 * the limiter recover (a bucket refilled, a window begun), so the rate needs less of a cut to fall
 * back under the limit, and each touch of the limit costs a whole pause, so less of each climb is
 * spent below it. Read from the `recoveryMs` of the learned rate (over {@link RECOVERY_MS}), so
 * that every process of a store climbs the same way from the same shared state. Chosen in the
 * simulation with jitter (BENCHMARKS.md, "Pacing"): 0.9 gained against token buckets and lost
 * against a fixed window shared by 4 processes; 0.85 was never the worst of the 8 cases.
 */
export const BETA_AFTER_PAUSE = 0.85
/** Time the rate takes to climb back to `max` after a decrease, ms, when touching the limit costs no pause. */
export const RECOVERY_MS = 3_000
/**
 * When the 429 came with a wait (`Retry-After`), the climb takes this many times that wait (within
 * {@link RECOVERY_MS} and {@link MAX_RECOVERY_MS}): each touch of the limit then stops the whole
 * client for that long, so it must come rarely (about one pause per 30 of its length: 3 % of the time).
 */
export const RECOVERY_PER_PAUSE = 20
/** Longest climb back, ms. */
export const MAX_RECOVERY_MS = 60_000
/**
 * While probing up from the first limit found (a lower bound), the rate doubles this often, ms. A
 * first 429 often comes within a second of an export's start, when the estimate holds a fraction of
 * the limit (10–15 requests/s of 100 in 4 workers' traces): doubling each half second reaches the
 * limit in about 1.5 s instead of 3 (measured in BENCHMARKS.md, "Pacing: 4 BullMQ workers").
 */
export const PROBE_DOUBLING_MS = 500
/**
 * The probing rate averaged over its last doubling (or since it began, `ms` ago, if sooner), as a
 * share of the rate at its end: 1 / (2 ln 2) after a whole doubling, 1 at its start.
 */
function probeAverage(ms: number): number {
  const span = Math.min(ms, PROBE_DOUBLING_MS) / PROBE_DOUBLING_MS
  return span < 1e-3 ? 1 : (1 - 2 ** -span) / (span * Math.LN2)
}
/**
 * The 429 that ends probing sets the limit at most this many times what the service accepted in
 * the probe's last second (see {@link probeLimit}, which may find more).
 */
export const PROBE_FOUND_CAP = 1.05
/**
 * The limit that explains what the service accepted (`accepted`, requests per second of the time
 * not paused) over the last second of a probe that a 429 ends at `now` (or since it began, if
 * sooner): the rate `r` at which a limiter that lets through at most `r` a second, with no burst,
 * would have accepted that many of the probe's requests, the probe's rate being known (it doubled
 * every {@link PROBE_DOUBLING_MS} from `BETA × max` at `at`). What was accepted alone is lower: the
 * probe spent part of that second below the limit, and a token bucket keeps no more than its burst
 * of what that part left unspent (a real trace of 4 workers against a bucket of 100 a second: 95,
 * then a whole night paced under it). `r` is the most the count can mean (a limiter with no burst
 * keeps nothing of what was left unspent): a fixed window keeps a window's unspent quota for the
 * end of the probe, so its count is the limit already, and a bucket's burst can put the count over
 * its limit (a bucket of 20 a second with a burst of 5). Capped at {@link PROBE_FOUND_CAP} ×
 * `accepted`, which the climb and the next paced 429 correct. Measured in the simulation
 * (BENCHMARKS.md, "Pacing", eighth look).
 *
 * `accepted` is the caller's count, not one taken over exactly this span: the process's own over
 * its last ten 100 ms slots (0.9–1 s), or the store's over about the last second. For a probe
 * younger than a second that second also holds what came before the probe: requests accepted
 * before the first 429, or, after a wait that began before that second, paused time not taken out
 * (a pause is booked whole in the slot it began in). `r` is then a rougher guess, bounded either
 * way by the cap and by the caller's least of it and the probe's averaged rate.
 */
function probeLimit(probe: LearnedRate, now: number, accepted: number): number {
  const from = Math.max(probe.at, now - RECENT_SLOTS * SLOT_MS)
  const spanMs = now - from
  const start = BETA * probe.max
  const rateAt = (t: number): number => start * 2 ** ((t - probe.at) / PROBE_DOUBLING_MS)
  // Never above the probe's own rate (the caller's least with its averaged rate holds that too).
  const ceiling = Math.min(PROBE_FOUND_CAP * accepted, rateAt(now))
  // Under 100 ms of probe (or a 429 met before its wait ended): too little of it to explain anything.
  if (spanMs < SLOT_MS || !(ceiling > accepted)) return accepted
  /** What a limiter of `r` a second accepts of the probe over the span, per second: the probe's rate under `r`, `r` from when it reached it. */
  const acceptedAt = (r: number): number => {
    const reached = Math.min(now, Math.max(from, probe.at + PROBE_DOUBLING_MS * Math.log2(r / start)))
    const below = ((rateAt(reached) - rateAt(from)) * PROBE_DOUBLING_MS) / Math.LN2 / 1000
    return (below + (r * (now - reached)) / 1000) / (spanMs / 1000)
  }
  if (acceptedAt(ceiling) <= accepted) return ceiling
  // acceptedAt rises with r: bisect between what was accepted (acceptedAt(accepted) <= accepted) and the ceiling.
  let low = accepted
  let high = ceiling
  for (let step = 0; step < 30; step++) {
    const middle = (low + high) / 2
    if (acceptedAt(middle) < accepted) low = middle
    else high = middle
  }
  return low
}
/** How long the climb back takes after a 429 that asked for a wait of `pauseMs` (0: none), ms. */
function recoveryFor(pauseMs: number): number {
  return Math.min(MAX_RECOVERY_MS, Math.max(RECOVERY_MS, RECOVERY_PER_PAUSE * pauseMs))
}
/**
 * A 429 met while paced sets `max` this much under the limit it found. The climb flattens at `max`
 * and passes it only after {@link RECOVERY_MS} (or its longer form after a pause): found exactly, or
 * a percent over (a fixed window's count may be), the limit was touched again well before that, in
 * a 4-worker trace against a fixed window every 12 s of a 20 s climb, each touch a pause of up to a
 * second for all of them. 2 % under, the climb reaches the limit found after about 1.5 times that.
 * Measured in the simulation (BENCHMARKS.md, "Pacing", sixth look): no more touches with any
 * limiter, a 4-process fixed window 0.882 → 0.901 of its limit in 28 s, the others within ±0.01;
 * real runs showed no change their ±0.03 could see. Not applied to the 429 that ends probing: its
 * estimate (the probe's rate averaged over its last doubling, or the limit its count explains,
 * {@link probeLimit}) lies under the rate it sent already.
 */
export const FOUND_MARGIN = 0.98
/** A 429 lowers the limit found to what was accepted lately, but not below this share of the rate sent. */
export const ACCEPTED_FLOOR = 0.5
/**
 * A 429 for a request sent within this long after the last decrease says nothing new, ms: a
 * limiter that was run dry (a bucket at zero) still refuses some requests sent at the lower rate
 * for a moment, and processes sharing a store spend tokens they leased before they learned of the
 * decrease (a lease holds up to a tenth of a second's worth). Without it, 4 processes cut the rate
 * three or four times for one touch of the limit (BETA to the fourth: a half).
 */
export const SETTLE_MS = 100
/** Least rate, requests per second: a service that refuses everything is asked once every 2 s. */
export const MIN_RATE = 0.5
/**
 * After a 429 for a request sent once the rate was lowered, with none of those accepted yet, the
 * service accepts nothing right now (a window that is closed): the client (or an operation paced on
 * its own) pauses for this, doubled at each such 429 in a row, up to {@link MAX_CLOSED_HOLD_MS}, ms.
 */
export const CLOSED_HOLD_MS = 250
export const MAX_CLOSED_HOLD_MS = 8_000

/** The pause after the `streak`th "closed" 429 in a row (see {@link CLOSED_HOLD_MS}), ms. */
export function closedHoldMs(streak: number): number {
  return Math.min(MAX_CLOSED_HOLD_MS, CLOSED_HOLD_MS * 2 ** Math.max(0, streak - 1))
}

/** Decreases that {@link RateLearner.restore} can give back, the last ones. */
export const KEPT_DECREASES = 8
/** The window the accepted and sent rates are measured over, ms. */
export const WINDOW_MS = 2_000
/** Pacing ends after this long without a 429, ms. */
export const UNPACE_AFTER_MS = 300_000
/**
 * A limit found (a learned rate that was not probing) is remembered this long after its `at`, ms:
 * a first 429 within it starts the climb from that limit. A week covers nightly and weekly jobs; a
 * service's limit changes rarely, and when it has, the climb finds it (a lower one with the next
 * 429, a raised one by probing past the old after the climb).
 */
export const REMEMBER_MS = 7 * 24 * 3_600_000

/** Width of one counting slot, ms. */
const SLOT_MS = 100
const SLOTS = WINDOW_MS / SLOT_MS
/** What was sent just before a 429 is measured over the last second only: the rate changes fast while it probes. */
const RECENT_SLOTS = 10
/** The first 429's estimate divides what was accepted by the time the client has run, but by no less than this, ms: a burst of a few requests in a few ms says little. */
const MIN_FIRST_SPAN_MS = 1_000

/**
 * Events per {@link SLOT_MS} slot over the last {@link WINDOW_MS}, in a ring: O(1) per event and
 * per read.
 */
class SlotCounter {
  readonly #counts = new Float64Array(SLOTS)
  /** Index (time / SLOT_MS) of the newest slot written. */
  #newest = 0
  /** Index of the first slot ever written, for a client younger than the window. */
  #first: number | undefined

  add(now: number, amount = 1): void {
    this.#advance(now)
    const slot = this.#newest % SLOTS
    this.#counts[slot] = (this.#counts[slot] ?? 0) + amount
  }

  /**
   * The sum over the last `slots` slots (all by default) ending at `now`, and their length in ms
   * (shorter for a young counter).
   */
  sum(now: number, slots = SLOTS): { readonly count: number; readonly spanMs: number } {
    this.#advance(now)
    let count = 0
    for (let index = this.#newest - slots + 1; index <= this.#newest; index++) count += this.#counts[((index % SLOTS) + SLOTS) % SLOTS] ?? 0
    const first = this.#first ?? Math.floor(now / SLOT_MS)
    const spanMs = Math.min(slots * SLOT_MS, now - Math.max(first, this.#newest - slots + 1) * SLOT_MS)
    return { count, spanMs }
  }

  #advance(now: number): void {
    const slot = Math.floor(now / SLOT_MS)
    this.#first ??= slot
    if (slot <= this.#newest) return
    // Clear the slots skipped since the last event (all of them after a long silence).
    for (let index = Math.max(this.#newest + 1, slot - SLOTS + 1); index <= slot; index++) this.#counts[index % SLOTS] = 0
    this.#newest = slot
  }
}

/** The learned rate of one client (and the clients derived from it). */
export class RateLearner {
  #learned: LearnedRate | undefined
  /** The newest limit found, kept after pacing ended (see {@link REMEMBER_MS}). */
  #remembered: LearnedRate | undefined
  /** When the last 429 was met, ms since the epoch. */
  #lastRefusal = 0
  /**
   * From when this process sends at the current learned rate, ms since the epoch: the decrease's
   * `at` for its own, the moment it adopted one learned by another process. A request sent before
   * it was sent at the old rate, so its 429 says nothing new, even when it was sent after the other
   * process's decrease (without this, each of N processes lowered the rate again for the same
   * overshoot: BETA to the N).
   */
  #decreasedAt = 0
  /** Whether a request sent after the last decrease was accepted. */
  #acceptedSinceDecrease = false
  /** What the last decreases replaced, the last one last (at most {@link KEPT_DECREASES}): given back by {@link RateLearner.restore}. */
  readonly #beforeDecreases: {
    readonly learned: LearnedRate | undefined
    readonly decreasedAt: number
    readonly acceptedSinceDecrease: boolean
  }[] = []
  readonly #accepted = new SlotCounter()
  readonly #sent = new SlotCounter()
  /** Paused time (ms) per slot: taken out of the span the rates are measured over. */
  readonly #paused = new SlotCounter()

  /**
   * Whether the rate's growth is capped at twice what this process sent lately. Off while its
   * tokens come from a budget shared with other processes (its share says nothing of what all of
   * them send); on again while it paces on its own tokens (a store that fails).
   */
  capsAtOwnSends = true
  /**
   * Whether a 429 lowers the rate from what this process sent, when that is below the paced rate.
   * Off for good once the store has answered a lease or given it a rate other processes learned:
   * from then on its own share is no measure of the limit, even while the store is down (a 429 met then lowered
   * the shared rate to one worker's share once the store was back).
   */
  lowersFromOwnSends = true

  /** The learned state (to share), or `undefined` while unpaced. */
  get learned(): LearnedRate | undefined {
    return this.#learned
  }

  /** Requests per second allowed at `now`, or `undefined` while unpaced. */
  rate(now: number): number | undefined {
    const learned = this.#learned
    if (learned === undefined) return undefined
    if (now - this.#lastRefusal > UNPACE_AFTER_MS) {
      this.#remember(learned, now)
      this.#learned = undefined
      return undefined
    }
    const t = Math.max(0, now - learned.at)
    const k = learned.recoveryMs
    let rate: number
    let probing: boolean
    if (k === 0) {
      // Probing: the first limit found was a lower bound; double every PROBE_DOUBLING_MS until the next 429.
      rate = BETA * learned.max * 2 ** (t / PROBE_DOUBLING_MS)
      probing = true
    } else {
      const u = (t - k) / k
      const beta = k > RECOVERY_MS ? BETA_AFTER_PAUSE : BETA
      rate = learned.max * (1 + (1 - beta) * u * u * u)
      probing = t > k
    }
    if (probing && this.capsAtOwnSends) {
      // No faster than twice what was sent lately: an idle client keeps its rate near the limit
      // found instead of growing one it never tried.
      const sent = this.#rateOf(this.#sent, now, RECENT_SLOTS)
      if (sent !== undefined) rate = Math.min(rate, Math.max(learned.max, 2 * sent))
    }
    return Math.max(MIN_RATE, rate)
  }

  /** A request is sent at `now`. */
  sent(now: number): void {
    this.#sent.add(now)
  }

  /** A request sent at `sentAt` was accepted (any response but 429) at `now`. */
  accepted(sentAt: number, now: number): void {
    this.#accepted.add(now)
    if (this.#learned !== undefined && sentAt > this.#decreasedAt) this.#acceptedSinceDecrease = true
  }

  /**
   * Gives back the decrease that set `learned`, if it is still the last one in force: its 429 proved
   * one operation's own limit, not the client's (scope.ts). The rate is then what it was before it
   * (unpaced, if it was the first 429), and the decrease before that may be given back in turn (the
   * last {@link KEPT_DECREASES}). Returns whether it did.
   */
  restore(learned: LearnedRate): boolean {
    if (this.#learned !== learned) return false
    const before = this.#beforeDecreases.pop()
    if (before === undefined) return false
    this.#learned = before.learned
    this.#decreasedAt = before.decreasedAt
    this.#acceptedSinceDecrease = before.acceptedSinceDecrease
    return true
  }

  /** The client is paused (a `Retry-After`, a closed service) for `ms` from `now`: not time in which it could send. */
  paused(now: number, ms: number): void {
    this.#paused.add(now, Math.min(ms, WINDOW_MS))
  }

  /**
   * A 429 for a request sent at `sentAt` arrived at `now`, asking for a wait of `pauseMs` (its
   * `Retry-After`; 0 without one). `groupAccepted`: requests per second that every process sharing
   * the store had accepted lately, when known. Says what it did to the rate (see {@link Refusal}).
   */
  refused(sentAt: number, now: number, pauseMs: number, groupAccepted?: number): Refusal {
    this.#lastRefusal = now
    const before = this.#learned
    if (before !== undefined && sentAt <= this.#decreasedAt + SETTLE_MS) return { kind: 'stale' }
    if (before !== undefined && !this.#acceptedSinceDecrease) return { kind: 'closed' }
    let learned: LearnedRate
    const remembered = this.#remembered
    if (before === undefined) {
      // The first 429: what the service accepted in the last second or more is a lower bound of
      // its limit (a client that just started may have sent for less than that).
      const { count, spanMs } = this.#accepted.sum(now)
      const own = (count * 1000) / Math.max(MIN_FIRST_SPAN_MS, spanMs)
      const estimate = Math.max(MIN_RATE / BETA, own, groupAccepted ?? 0)
      // Since a limit was found (by this process before its pacing ended, or by another, read from
      // the store), climb from it instead of probing: what was accepted says less (at an export's
      // start, a bucket's burst). The climb takes RECOVERY_MS whatever the wait, and then probes
      // past it: a memory is where to start, and every run measures the limit again with its next
      // 429 (climbed over 20 s, a memory 10-20 % low, from a night the limit was shared with other
      // traffic, held every later 28 s night there: 0.74-0.83 of the limit simulated, against 0.86
      // with no memory). Unless the service just accepted more than it: then it is stale (a night
      // of 429s left it at the least rate, and each first 429 would carry it on), probe.
      learned =
        remembered !== undefined && now - remembered.at <= REMEMBER_MS && remembered.max >= estimate
          ? { max: remembered.max, at: now, recoveryMs: RECOVERY_MS }
          : { max: estimate, at: now, recoveryMs: 0 }
    } else {
      // Paced: the service refused at the rate sent, so its limit is about that (the paced rate,
      // or what was actually sent while not paused, if less), or what it accepted in the last
      // second if that is less still: a token bucket's burst or a window's unspent quota lets the
      // rate sent climb past the limit before the 429 comes. What was accepted counts down to half
      // the rate sent at most (a store that counts too few must not take the rate with it).
      let current = this.rate(sentAt) ?? MIN_RATE
      // A 429 that ends probing: the limit lies between the rate of one doubling ago (or the rate
      // probing started from, if it began less than a doubling ago) and this one; the rate averaged
      // over that stretch is where the 429 was earned.
      if (before.recoveryMs === 0) current *= probeAverage(Math.max(0, sentAt - before.at))
      const sent = (this.lowersFromOwnSends ? this.#rateOf(this.#sent, now, RECENT_SLOTS) : undefined) ?? current
      const accepted =
        (this.lowersFromOwnSends ? this.#rateOf(this.#accepted, now, RECENT_SLOTS) : this.#perActiveSecond(groupAccepted, now)) ?? current
      const margin = before.recoveryMs === 0 ? 1 : FOUND_MARGIN
      const limit = before.recoveryMs === 0 ? probeLimit(before, now, accepted) : accepted
      const found = margin * Math.min(current, sent, Math.max(limit, ACCEPTED_FLOOR * current))
      learned = { max: Math.max(MIN_RATE / BETA, found), at: now, recoveryMs: recoveryFor(pauseMs) }
    }
    // The climb starts once the client may send again: a pause (`Retry-After`) teaches nothing about
    // the rate, and a climb timed from the 429 would come out of a 1 s pause two doublings higher.
    if (pauseMs > 0) learned = { ...learned, at: now + pauseMs }
    this.#beforeDecreases.push({ learned: before, decreasedAt: this.#decreasedAt, acceptedSinceDecrease: this.#acceptedSinceDecrease })
    if (this.#beforeDecreases.length > KEPT_DECREASES) this.#beforeDecreases.shift()
    this.#learned = learned
    this.#decreasedAt = now
    this.#acceptedSinceDecrease = false
    return { kind: 'lowered', learned }
  }

  /**
   * Raises a first estimate (still probing) to `groupAccepted`, what all processes of the store had
   * accepted lately (requests/s), when that is more. At an export's start the processes meet the
   * limit within a few ms of each other, each before any has told the store its count, so each first
   * estimate is one process's share (4 workers probed up from 4 requests/s against a limit of 100);
   * each then tells the store its count. Only while the wait the 429 asked for (`Retry-After`) lasts:
   * nothing is sent then, so the count holds only what was accepted before the 429. Without a wait
   * the rate probes up at once and the count soon holds the probe's own requests (raised then, a
   * fixed window without `Retry-After` met more 429s in a 4-process simulation, and a token bucket
   * gained). The raised state starts 1 ms later, so that the store keeps it over the one it raises.
   * Returns it (to tell the store), or `undefined` when nothing was raised.
   */
  raiseFirstEstimate(groupAccepted: number, now: number): LearnedRate | undefined {
    const learned = this.#learned
    if (learned === undefined || learned.recoveryMs !== 0 || now >= learned.at || groupAccepted <= learned.max) return undefined
    this.#learned = { max: groupAccepted, at: learned.at + 1, recoveryMs: 0 }
    return this.#learned
  }

  /**
   * Takes a learned state from another process (the store): kept when it is newer than this one's.
   * Returns whether it was taken.
   */
  adopt(shared: LearnedRate, now: number): boolean {
    if (now - shared.at > UNPACE_AFTER_MS) {
      // Too old to pace by (its pacing has ended): a limit to start from at the next first 429.
      this.#remember(shared, now)
      return false
    }
    if (this.#learned !== undefined && shared.at <= this.#learned.at) return false
    this.#learned = shared
    this.#decreasedAt = Math.max(shared.at, now)
    this.#acceptedSinceDecrease = false
    this.#lastRefusal = Math.max(this.#lastRefusal, shared.at)
    return true
  }

  /** Keeps `learned` as the limit to start from, when it is one (not a probe's lower bound), recent, and newer than the one kept. */
  #remember(learned: LearnedRate, now: number): void {
    if (learned.recoveryMs === 0 || now - learned.at > REMEMBER_MS) return
    if (this.#remembered === undefined || learned.at > this.#remembered.at) this.#remembered = learned
  }

  /**
   * `perSecond` (what all processes of a store accepted over the last second of wall time, paused
   * time included) per second this process was not paused in it: a client pause is shared by all
   * of them. `undefined` when unknown, or with under 100 ms not paused.
   */
  #perActiveSecond(perSecond: number | undefined, now: number): number | undefined {
    if (perSecond === undefined) return undefined
    const active = RECENT_SLOTS * SLOT_MS - this.#paused.sum(now, RECENT_SLOTS).count
    return active < SLOT_MS ? undefined : (perSecond * RECENT_SLOTS * SLOT_MS) / active
  }

  /** Events per second over the last `slots` slots' time not paused, or `undefined` with under 100 ms of it. */
  #rateOf(counter: SlotCounter, now: number, slots = SLOTS): number | undefined {
    const { count, spanMs } = counter.sum(now, slots)
    const active = spanMs - this.#paused.sum(now, slots).count
    return active < SLOT_MS ? undefined : (count * 1000) / active
  }
}
