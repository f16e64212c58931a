import { afterAll, beforeAll, beforeEach } from 'vitest'

/** A test server a file shares between its tests. */
export interface SharedServer {
  /** Forgets the requests it saw and the responder a test set. */
  clear(): void
  close(): Promise<void>
}

/**
 * One server for the test file that calls it: started by `start` before its tests (`started`
 * receives it: assign it to the file's `server`), cleared before each test, closed after the file.
 */
export function useServer<S extends SharedServer>(start: () => Promise<S>, started: (server: S) => void): void {
  let server: S | undefined
  beforeAll(async () => {
    server = await start()
    started(server)
  })
  afterAll(async () => {
    await server?.close()
  })
  beforeEach(() => {
    server?.clear()
  })
}
