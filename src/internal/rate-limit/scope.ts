/**
 * Whose limit a 429 is: the client's (the key pair's budget, which every operation spends), or one
 * operation's own (a service that limits token issuance alone, say, while lists flow). Pure
 * bookkeeping over times in ms (no timers, no I/O), read by `limiter.ts` and the simulation.
 *
 * A 429 of the client's limit lowers the paced rate of the whole client and pauses it for its
 * `Retry-After`; one of an operation's own limit must do neither, or every 429 of that operation
 * holds the whole client near the least rate: against a 1/s limit on login calls alone, within a
 * key's 100/s, an export read 0.001 of the 100/s (bench/pacing/simulate.ts, BENCHMARKS.md).
 *
 * One 429 cannot tell them apart; the answers around it can. A 429 of a request sent once its
 * operation X's last 429 had come back is judged (one sent before is the same touch of the limit,
 * judged as that one was: a burst of login calls refused together). Over the window (see
 * {@link WINDOW_MS}), it is X's own when:
 *
 * - X met at least {@link MIN_REFUSED} 429s (this one counted), and they were at least
 *   {@link MIN_REFUSED_SHARE} of its answers: an operation limited alone, sent more often than its
 *   limit, is refused most of the time, where the client's limit refuses a few requests at each
 *   touch (after a first verdict of its own, for {@link KEPT_MS}, this is not asked again);
 * - the other operations had at least {@link MIN_OTHERS_ACCEPTED} requests accepted, met 429s at
 *   no more than {@link OTHERS_SHARE_RATIO} times X's share, and none in a second X met one: the
 *   client's limit refuses whatever is sent when it is met, an export's pages and login calls alike.
 *
 * Or, untested (a guess), when the others could show nothing: batch requests of other operations
 * waited for a turn of the client's paced rate through the whole window, fewer than
 * {@link MIN_OTHERS_ACCEPTED} of the others' requests were accepted and none refused, while X's
 * interactive calls took every turn (login calls, which go first, asking more than the
 * client's pace: started before an export, they held it at 0.001 of a key's limit for good). Only
 * an interactive call's 429 is so judged (limiter.ts): the requests of one lane wait their turns
 * in order, so one operation's queue is no sign; and not with a store that shares the rate, where
 * a guess gives no lowering back. X is then paced on its own, so that the others get turns and
 * their answers can judge X's next 429. If the others then meet 429s too (the client's limit after
 * all), or X's next 429 does not bear the guess out, that 429 is the client's, and X is not
 * guessed again for a while ({@link untestedAfterMs}: 1 minute, doubled at each such mistake, up
 * to 8; forgotten {@link FORGET_MS} after the last).
 *
 * A verdict of its own stands for {@link KEPT_MS} after the last, or while the operation is paced on
 * its own (an export held under its limit by its pace meets no 429 for minutes), until the others'
 * 429s prove it wrong.
 *
 * Answers are counted by when they came, in whole seconds, from the client's first 429 on. But for
 * the guess, the first 429 of an operation is the client's: that costs one lowering and one pause,
 * which limiter.ts gives back once the operation's 429s prove its own. A 429 judged the
 * operation's own by mistake (the client's limit after all) lowers nothing of the client, but the
 * others' next 429 does, and makes X's next 429 the client's again. Known to be misjudged: bursts
 * of login calls beside a key-wide concurrency limit (BENCHMARKS.md, "Pacing: a limit on one
 * endpoint alone"); the guess, where the login calls alone ask more than the key's whole limit
 * (BENCHMARKS.md, "Pacing: an export that starts while login calls meet their own limit").
 */

/** Whose limit a 429 is (see the module's comment). */
export type LimitScope = 'client' | 'operation'

/**
 * How far back the answers are counted, ms, in whole seconds; or further, the operation's last
 * `Retry-After` and 2 s more (up to {@link MAX_WINDOW_MS}): two 429s of one caller that waits 5 s
 * between them must fall in one window.
 */
export const WINDOW_MS = 3_000
/** The longest window, ms: the longest `Retry-After` a call waits (60 s) and {@link WINDOW_MS}. */
export const MAX_WINDOW_MS = 63_000
/** 429s of an operation in the window, at least, for one to be its own. */
export const MIN_REFUSED = 2
/** Share of an operation's answers in the window that were 429s, at least, for one to be its own. */
export const MIN_REFUSED_SHARE = 0.5
/** Requests of other operations accepted in the window, at least, for a 429 to be its operation's own. */
export const MIN_OTHERS_ACCEPTED = 2
/** The other operations' share of 429s in the window, at most this times the operation's, for a 429 to be its own. */
export const OTHERS_SHARE_RATIO = 0.1

/** A 429 judged its operation's own keeps that verdict for the next of that operation this long after it, ms, while the others' answers agree. */
export const KEPT_MS = 60_000

/**
 * How long after its verdict of its own was proved wrong the `times`-th time an operation is not
 * judged untested again, ms: {@link KEPT_MS}, doubled at each time, up to 8 × (8 minutes). Each
 * untested verdict that is wrong (a key-wide limit below what the login calls alone ask) lets the
 * others' requests out at the client's whole rate, into the limit, once.
 */
export function untestedAfterMs(times: number): number {
  return KEPT_MS * 2 ** Math.min(3, Math.max(0, times - 1))
}

/** Wrong guesses are forgotten this long after the last, ms (the key's limit may have changed since): the next counts as the first. */
export const FORGET_MS = 30 * 60_000

const SLOT_MS = 1_000
const SLOTS = MAX_WINDOW_MS / SLOT_MS

/** One operation's answers in each of the last {@link SLOTS} seconds. */
class Answers {
  readonly #slots = Array.from({ length: SLOTS }, () => ({ second: -1, accepted: 0, refused: 0 }))

  add(now: number, refused: boolean): void {
    const second = Math.floor(now / SLOT_MS)
    let slot = this.#slots.find((candidate) => candidate.second === second)
    if (slot === undefined) {
      // The oldest second makes way (the clock may step back a little: a slot is found by its second, not its index).
      slot = this.#slots.reduce((oldest, candidate) => (candidate.second < oldest.second ? candidate : oldest))
      slot.second = second
      slot.accepted = 0
      slot.refused = 0
    }
    if (refused) slot.refused++
    else slot.accepted++
  }

  /** The seconds (since the epoch) in the `windowMs` ending at `now` in which a request met a 429. */
  refusedSeconds(now: number, windowMs: number): number[] {
    const last = Math.floor(now / SLOT_MS)
    const first = last - Math.ceil(windowMs / SLOT_MS) + 1
    return this.#slots.filter((slot) => slot.second >= first && slot.second <= last && slot.refused > 0).map((slot) => slot.second)
  }

  /** Whether a request met a 429 in one of `seconds`. */
  refusedIn(seconds: readonly number[]): boolean {
    return this.#slots.some((slot) => slot.refused > 0 && seconds.includes(slot.second))
  }

  /** Accepted and refused in the `windowMs` ending at `now` (whole seconds). */
  count(now: number, windowMs: number): { accepted: number; refused: number } {
    const last = Math.floor(now / SLOT_MS)
    const first = last - Math.ceil(windowMs / SLOT_MS) + 1
    let accepted = 0
    let refused = 0
    for (const slot of this.#slots) {
      // A second after `now` is one counted before the clock stepped back: not in this window.
      if (slot.second < first || slot.second > last) continue
      accepted += slot.accepted
      refused += slot.refused
    }
    return { accepted, refused }
  }
}

/** What the limiter knows of a 429 beyond its times (see {@link LimitScopes.refused}). */
export interface RefusalContext {
  /** The wait the 429 asked for, ms (0 or absent: none). */
  readonly waitMs?: number
  /**
   * Since when (ms since the epoch) the longest-waiting batch request of another operation has
   * waited for a turn of the client's paced rate; absent when none waits or the 429 is not an
   * interactive call's (the guess in the module's comment).
   */
  readonly othersWaitingSince?: number | undefined
  /** The operation is paced on its own now (own-pace.ts): a verdict of its own stands while it is. */
  readonly paced?: boolean
}

/** Judges each 429 of a client (see the module's comment); fed from the client's first 429 on. */
export class LimitScopes {
  /** Answers by operation (a dozen operations at most: one per endpoint). */
  readonly #answers = new Map<string, Answers>()
  /** Operations whose last 429 was judged their own, and when. */
  readonly #alone = new Map<string, number>()
  /** The wait each operation's last 429 asked for, ms. */
  readonly #lastWaitMs = new Map<string, number>()
  /** When each operation's last judged 429 came, and the verdict. */
  readonly #last = new Map<string, { readonly at: number; readonly scope: LimitScope }>()
  /** When a verdict of each operation's own was last proved wrong by the others' 429s, and how many times: no untested verdict for {@link untestedAfterMs}. */
  readonly #disproved = new Map<string, { readonly at: number; readonly times: number }>()
  /** Operations whose last verdict of their own was the untested guess, and when it was made: no answer has confirmed it yet. */
  readonly #guessed = new Map<string, number>()

  /** A request of `operation` was answered with anything but 429 at `now`. */
  accepted(operation: string, now: number): void {
    this.#of(operation).add(now, false)
  }

  /** A request of `operation` sent at `sentAt` was answered 429 at `now` (`context`: what else is known of it): whose limit it is. */
  refused(operation: string, sentAt: number, now: number, context: RefusalContext = {}): LimitScope {
    const own = this.#of(operation)
    own.add(now, true)
    // Sent before the operation's last 429 came back: the same touch of the limit as that one (20
    // login calls sent at once and refused together), judged as it was. Judged on its own, the
    // 429s of a burst that took a key's bucket came back before the export's, and each one after
    // the first counted the export's requests as accepted while the burst's were refused.
    const last = this.#last.get(operation)
    if (last !== undefined && sentAt <= last.at) return last.scope
    const scope = this.#judge(operation, own, now, context)
    this.#last.set(operation, { at: now, scope })
    return scope
  }

  #judge(operation: string, own: Answers, now: number, { waitMs = 0, othersWaitingSince, paced = false }: RefusalContext): LimitScope {
    const windowMs = Math.min(MAX_WINDOW_MS, Math.max(WINDOW_MS, (this.#lastWaitMs.get(operation) ?? 0) + 2_000))
    this.#lastWaitMs.set(operation, waitMs)
    const mySeconds = own.refusedSeconds(now, windowMs)
    let accepted = 0
    let refused = 0
    let together = false
    for (const [other, answers] of this.#answers) {
      if (other === operation) continue
      const theirs = answers.count(now, windowMs)
      accepted += theirs.accepted
      refused += theirs.refused
      together ||= answers.refusedIn(mySeconds)
    }
    // Untested (see the module's comment): the others waited through the window, too few of them
    // answered to judge by (a user's list once in a while: with none allowed, one answered each 2 s
    // held the export at 0.003 of the limit), none refused.
    const untested =
      accepted < MIN_OTHERS_ACCEPTED && refused === 0 && othersWaitingSince !== undefined && now - othersWaitingSince >= windowMs
    if (untested && this.#guess(operation, now)) return 'operation'
    const mine = own.count(now, windowMs)
    const share = mine.refused / (mine.accepted + mine.refused)
    // Refused in the same second as this operation: the client's limit, met by a burst of this
    // operation (20 login calls at once took a key's bucket, and the export's requests beside
    // them were refused too, a few among hundreds accepted: a share too small to tell).
    const othersRefused = together || refused > OTHERS_SHARE_RATIO * share * (accepted + refused)
    const judged = this.#alone.get(operation)
    const known = judged !== undefined && (now - judged <= KEPT_MS || paced)
    const guessed = this.#guessed.delete(operation)
    let scope: LimitScope = 'operation'
    if (!known && (mine.refused < MIN_REFUSED || mine.refused < MIN_REFUSED_SHARE * (mine.accepted + mine.refused))) scope = 'client'
    else if (othersRefused || accepted < MIN_OTHERS_ACCEPTED) {
      this.#alone.delete(operation)
      scope = 'client'
    }
    // A verdict of its own the others' 429s prove wrong; or a guess the operation's next 429
    // (however late it comes) does not bear out by the answers. Counted only when the others met
    // 429s beside it, a guess against a key's 3/s without Retry-After escaped the count three
    // times in four, and was made again at once. No guess for a while.
    if ((othersRefused && known) || (guessed && scope === 'client')) {
      const last = this.#disproved.get(operation)
      const times = last !== undefined && now - last.at <= FORGET_MS ? last.times : 0
      this.#disproved.set(operation, { at: now, times: times + 1 })
    }
    if (scope === 'client') return 'client'
    this.#alone.set(operation, now)
    return 'operation'
  }

  /** The untested verdict, unless a wrong one of `operation`'s is too recent ({@link untestedAfterMs}): whether it is made. */
  #guess(operation: string, now: number): boolean {
    const disproved = this.#disproved.get(operation)
    if (disproved !== undefined && now - disproved.at <= untestedAfterMs(disproved.times)) return false
    this.#guessed.set(operation, now)
    this.#alone.set(operation, now)
    return true
  }

  #of(operation: string): Answers {
    let answers = this.#answers.get(operation)
    if (answers === undefined) this.#answers.set(operation, (answers = new Answers()))
    return answers
  }
}
