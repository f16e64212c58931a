/**
 * `chat-service-sdk/testing`: an in-memory, spec-faithful fake of the whole Chat Service (see
 * `chat-service-api.md`), for tests, examples, benchmarks and local development
 * (`npx chat-service-fake`).
 *
 * ```ts
 * import { ChatServiceClient } from 'chat-service-sdk'
 * import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
 *
 * const fake = createFakeChatService({ seed: generateDataset({ seed: 1 }) })
 * const server = await fake.listen()                          // http://127.0.0.1:<port>
 * const client = new ChatServiceClient(server.clientOptions()) // the first company's first key
 * await client.close()
 * await server.close()
 * ```
 *
 * The fake does not import the SDK: it is a separate reading of the spec, so it can catch SDK
 * bugs. Listen mode (`fake.listen()`) has full fidelity; msw mode
 * (`chat-service-sdk/testing/msw`) cannot see GET bodies. TESTING.md is the guide: both modes,
 * what msw mode cannot see, faults, the command-line fake, and the fake's choices where the spec
 * is open.
 *
 * @module
 */

import {} from '../engine-check.ts' // first: refuses an unsupported Node.js (see engine-check.ts)
export { createFakeChatService, type FakeChatService } from './fake-service.ts'
export { generateDataset, mulberry32, type GenerateDatasetOptions } from './dataset.ts'
export { WARNING_HEADER } from './invisible-body.ts'
// types.ts holds the kit's public types and nothing else: every one of them is exported.
export type * from './types.ts'
