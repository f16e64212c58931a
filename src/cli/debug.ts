/**
 * Stop points for tests of races: with `CHAT_SERVICE_DEBUG_STOP_AT=lock:claimed,lock:held` the
 * command stops itself (SIGSTOP, as Ctrl-Z would) the first time it reaches each named point,
 * after saying so on stderr, so that a test can run another export at exactly that moment and let
 * this one go on with SIGCONT. Nothing happens without the variable; it is not a user-facing
 * setting (DEVELOPERS.md, "How the suite runs", lists the points).
 *
 * @module
 */

const VARIABLE = 'CHAT_SERVICE_DEBUG_STOP_AT'
const reached = new Set<string>()

/** Stops this process (SIGSTOP) if `point` is named in CHAT_SERVICE_DEBUG_STOP_AT and was not reached before. */
export function stopPoint(point: string): void {
  const wanted = process.env[VARIABLE]
  if (wanted === undefined || reached.has(point) || !wanted.split(',').includes(point)) return
  reached.add(point)
  process.stderr.write(`chat-service: debug: stopped at ${point} (pid ${process.pid})\n`)
  process.kill(process.pid, 'SIGSTOP')
}
