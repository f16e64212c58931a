// Consumer check "ts-libcheck" (scripts/consumer/run.sh): the msw-mode types of
// `chat-service-sdk/testing/msw` in a project that installed msw@3 and @mswjs/interceptors, under
// `skipLibCheck: false`. Copied in as .mts and .cts, so one tsc run reads both the .d.ts and the
// .d.cts of the package (and of msw) and checks them in full.
import type { RequestHandler } from 'msw'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService } from 'chat-service-sdk/testing'
import {
  createFakeHandlers,
  createMswNetwork,
  type FakeHandlersOptions,
  type MswNetwork,
  type MswNetworkOptions,
} from 'chat-service-sdk/testing/msw'

type IsAny<T> = 0 extends 1 & T ? true : false
type AssertFalse<T extends false> = T
export type MswTypeChecks = [AssertFalse<IsAny<MswNetwork>>, AssertFalse<IsAny<ReturnType<typeof createFakeHandlers>[number]>>]

export async function mswMode(): Promise<number> {
  const fake = createFakeChatService()
  const handlerOptions: FakeHandlersOptions = { companyForGet: 'co_1' }
  const handlers: RequestHandler[] = createFakeHandlers(fake, 'http://chat.test', handlerOptions)
  const networkOptions: MswNetworkOptions = { onUnhandledFrame: 'error', quiet: true }
  const network: MswNetwork = createMswNetwork(handlers, networkOptions)
  const lifecycle: (keyof MswNetwork)[] = ['enable', 'disable'] // called for real by msw.mjs / msw.cjs
  await using client = new ChatServiceClient({ baseUrl: 'http://chat.test', keyId: 'k', keySecret: 's', allowInsecureHttp: true })
  const page = await client.agents.list()
  // @ts-expect-error handlers need a base URL
  createFakeHandlers(fake)
  return page.data.length + lifecycle.length + (typeof network.enable === 'function' ? 1 : 0)
}
