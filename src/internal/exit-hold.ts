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
 * registry, nothing allocated per call; only deadlines that are Node's own timers, not a test's
 * fakes: {@link unrefNodeTimer}), and listens once, from the first armed attempt on (never
 * at import), for `'beforeExit'`, which Node emits when the loop has emptied, in the main thread
 * and in worker threads alike. If attempts are then still counted, it starts one ref'd timer, the
 * hold, which keeps the loop running: the unref'd deadlines fire on time, the calls reject as
 * they would have with ref'd timers, and the hold is cleared when the count comes back to zero
 * (then the loop empties again and the process exits). With nothing counted the listener does
 * nothing, and a listener alone never keeps a process alive. `'beforeExit'` is not emitted on
 * `process.exit()` or an uncaught exception: exits the program chose, which a ref'd timer would not
 * have delayed either. The hold is made and cleared with Node's own timer functions, as they were
 * when the SDK was loaded, so that a test's fake timers neither make it nor fail to clear it.
 */

// Node's own timer functions as they were when the SDK was loaded: a test's fake timers (vitest,
// jest, sinon, node:test's mock.timers) installed later replace the globals, not these.
const nodeSetTimeout = setTimeout
const nodeClearTimeout = clearTimeout
const nodeSetInterval = setInterval
const nodeClearInterval = clearInterval
/** The prototype of Node's own timers (`Timeout`), read once from a timer made and cleared at the first arming. */
let nodeTimerPrototype: object | undefined

/** Attempts whose deadline timer is armed and that have not settled. */
let armed = 0
/** The ref'd timer that keeps the loop alive while `armed > 0`, started only by `'beforeExit'`. */
let hold: ReturnType<typeof setInterval> | undefined
let listening = false

/** The longest delay a Node timer takes (about 24.8 days); the hold's interval, which never needs to fire. */
const LONGEST = 2_147_483_647

/**
 * Unrefs `timer`, an attempt's deadline, if it is one of Node's own timers, and says whether it
 * was. A test's fake timer (made while fake timers were installed) is left as it is and must not
 * be counted: it fires only when the test moves its clock, perhaps never (a test that resets its
 * fake timers with a call still pending), and a count that never came back to zero would hold the
 * process open for ever. Nor is it unref'd: not every fake timer has the method. (A class name does
 * not tell them apart: node:test's fake is a `Timeout` too.)
 */
export function unrefNodeTimer(timer: unknown): boolean {
  if (nodeTimerPrototype === undefined) {
    const probe = nodeSetTimeout(noop, 0)
    nodeTimerPrototype = Object.getPrototypeOf(probe) as object
    nodeClearTimeout(probe)
  }
  if (typeof timer !== 'object' || timer === null || Object.getPrototypeOf(timer) !== nodeTimerPrototype) return false
  ;(timer as NodeJS.Timeout).unref()
  return true
}

/** An attempt armed a deadline timer of Node's own ({@link unrefNodeTimer}). Call once per attempt, then {@link deadlineSettled} once. */
export function deadlineArmed(): void {
  armed++
  if (!listening) listen()
}

/** An attempt counted by {@link deadlineArmed} settled (or re-armed with a test's fake timer): its deadline no longer needs the process. */
export function deadlineSettled(): void {
  if (--armed === 0 && hold !== undefined) {
    nodeClearInterval(hold)
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
  if (armed > 0 && hold === undefined) hold = nodeSetInterval(noop, LONGEST)
}

function noop(): void {}
