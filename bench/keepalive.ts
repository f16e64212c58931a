// The `reset: false` dispatcher used to preview the suggested transport fix (see BENCHMARKS.md).
import { Agent, type Dispatcher } from 'undici'

/**
 * An undici Agent whose every dispatch carries `reset: false`. By default undici marks a socket for
 * closing after any request whose method does not expect a payload (GET) but carries one, so every
 * GET of this API opens a new TCP connection. It was passed to the SDK as its `dispatcher` to
 * preview the fix before the transport sent `reset: false` itself; it now sends it, so the
 * "SDK + reset: false dispatcher" row is a control that should match the plain SDK row.
 */
export function keepAliveDispatcher(): Dispatcher {
  const agent = new Agent({ connections: 64, pipelining: 1 })
  return agent.compose((dispatch) => (options, handler) => dispatch({ ...options, reset: false }, handler))
}
