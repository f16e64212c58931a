/**
 * Keeps the process (or worker thread) alive while an attempt's deadline is still to come, without
 * a ref'd timer per attempt (issue 32, BENCHMARKS.md's eighth look).
 *
 * An attempt's deadline timer is unref'd (exchange.ts): a ref'd one costs about 2,800 instructions
 * a sequential call, because Node deletes a duration's timer list when its last ref'd timer is
 * cleared and the next call builds it again (unref'd lists are kept), and it toggles the loop's
 * timer ref on each 0 -> 1 -> 0. A real request's socket keeps the process alive anyway, as it
 * does for Node's http and undici's own unref'd timers. But a dispatcher may hold a request with
 * no handle open (msw's `delay('infinite')` over its in-memory socket, a mock that never answers):
 * with nothing ref'd, the loop empties, and the process would exit under the unsettled call (exit
 * code 13 under a top-level await, 0 in CommonJS) instead of the call throwing APITimeoutError.
 *
 * So this module counts the attempts whose deadline is armed and not yet settled (a counter: no
 * registry, nothing allocated per call), and listens once, from the first armed attempt on (never
 * at import), for `'beforeExit'`, which Node emits when the loop has emptied, in the main thread
 * and in worker threads alike. If attempts are then still counted, it starts one ref'd timer, the
 * hold, which keeps the loop running: the unref'd deadlines fire on time, the calls reject as
 * they would have with ref'd timers, and the hold is cleared when the count comes back to zero
 * (then the loop empties again and the process exits). With nothing counted the listener does
 * nothing, and a listener alone never keeps a process alive. `'beforeExit'` is not emitted on
 * `process.exit()` or an uncaught exception: exits the program chose, which a ref'd timer would not
 * have delayed either.
 */

/** Attempts whose deadline timer is armed and that have not settled. */
let armed = 0
/** The ref'd timer that keeps the loop alive while `armed > 0`, started only by `'beforeExit'`. */
let hold: ReturnType<typeof setInterval> | undefined
let listening = false

/** The longest delay a Node timer takes (about 24.8 days); the hold's interval, which never needs to fire. */
const LONGEST = 2_147_483_647

/** An attempt armed its (unref'd) deadline timer. Call once per attempt, then {@link deadlineSettled} once. */
export function deadlineArmed(): void {
  armed++
  if (!listening) listen()
}

/** An attempt counted by {@link deadlineArmed} settled: its deadline no longer needs the process. */
export function deadlineSettled(): void {
  if (--armed === 0 && hold !== undefined) {
    clearInterval(hold)
    hold = undefined
  }
}

function listen(): void {
  listening = true
  // Not `once`: the loop may empty again later (a retry's attempt after a ref'd backoff wait).
  process.on('beforeExit', chatServiceSdkExitHold)
}

/**
 * The `'beforeExit'` listener. Its name is how the test suite's shared-worker guard
 * (test/setup/shared-worker-guard.ts) tells it from a listener a test file left behind: it stays
 * for as long as the module does, one per loaded copy of the SDK.
 */
function chatServiceSdkExitHold(): void {
  if (armed > 0 && hold === undefined) hold = setInterval(noop, LONGEST)
}

function noop(): void {}
