import type { Engine } from './engine.ts'

/**
 * Where a fake keeps its engine, for `chat-service-sdk/testing/msw`. A registered symbol, so that
 * the separately bundled msw entry finds the engine of a fake made by the main testing entry.
 * @internal
 */
export const ENGINE_KEY: unique symbol = Symbol.for('chat-service-sdk/testing:engine')

/** The engine behind a fake made by `createFakeChatService`. @internal */
export function engineOf(fake: object): Engine {
  const engine = (fake as { [ENGINE_KEY]?: Engine })[ENGINE_KEY]
  if (engine === undefined) throw new TypeError('chat-service-sdk/testing/msw: expected a fake made by createFakeChatService()')
  return engine
}
