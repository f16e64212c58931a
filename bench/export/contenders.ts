// The export benchmark's contenders: the SDK's nested loop, the SDK's listAll (once it exists), and
// the hand-written raw-undici worker pool (the floor). Every contender checks what it delivers: the
// messages in nested-loop order (the dataset's ids strictly increase along it) and all of them.
import type { Agent, Dispatcher } from 'undici'
import { ChatServiceClient, type ClientOptions } from 'chat-service-sdk'
import { credentialsBody, decompressingFloor, floorAgent, floorHeaders, identityHeaders } from '../floor.ts'
import { Deadline } from '../lib.ts'
import type { ExpectedExport } from './dataset.ts'
import type { SdkSetup } from './features.ts'
import { rawPoolPages } from './raw-pool.ts'
import type { Encoding } from './server.ts'

export interface ExportRun {
  messages: number
  wallMs: number
  /** Client CPU time (user + system) of this process during the run. */
  cpuMs: number
}

export interface ExportContender {
  readonly name: string
  readonly concurrency: number
  /** Runs one export (or its first `maxMessages` messages, for warm-up) and checks it. */
  run(budgetMs: number, maxMessages?: number): Promise<ExportRun>
  close(): Promise<void>
}

export interface Target {
  /** Where to send requests: the server itself or the emulated link in front of it. */
  baseUrl: string
  keyId: string
  keySecret: string
  expected: ExpectedExport
}

/** Checks order and count of an export's messages as they arrive. */
class OrderCheck {
  count = 0
  #last = ''
  readonly name: string
  constructor(name: string) {
    this.name = name
  }
  push(id: string): void {
    if (id <= this.#last) throw new Error(`${this.name}: message ${id} after ${this.#last}: not in nested-loop order`)
    this.#last = id
    this.count++
  }
  finish(expected: ExpectedExport, maxMessages: number | undefined): void {
    if (maxMessages !== undefined) return
    if (this.count !== expected.messages || this.#last !== expected.lastId)
      throw new Error(
        `${this.name}: exported ${this.count} messages ending at ${this.#last}; expected ${expected.messages} ending at ${expected.lastId}`,
      )
  }
}

export async function timed(name: string, budgetMs: number, body: (deadline: Deadline) => Promise<number>): Promise<ExportRun> {
  const deadline = new Deadline(budgetMs, `${name} export`)
  const cpu = process.cpuUsage()
  const started = performance.now()
  const messages = await body(deadline)
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { messages, wallMs, cpuMs: (used.user + used.system) / 1000 }
}

/** A client of the BUILT package; `extra` holds options this SDK version may not know yet (e.g. `compression`). */
export function sdkClient(target: Target, extra: Record<string, unknown> = {}): ChatServiceClient {
  const options: ClientOptions = { baseUrl: target.baseUrl, keyId: target.keyId, keySecret: target.keySecret, logLevel: 'warn' }
  return new ChatServiceClient(Object.assign(options, extra))
}

/** The nested loop a new user writes: each conversation, then each of its messages, one request at a time. */
export function nestedLoop(target: Target, name: string, setup?: SdkSetup): ExportContender {
  const client = sdkClient(target, setup?.extra)
  return {
    name,
    concurrency: 1,
    run: (budgetMs, maxMessages) =>
      timed(name, budgetMs, async (deadline) => {
        const check = new OrderCheck(name)
        outer: for await (const conversation of client.conversations.list({ limit: 100 })) {
          for await (const message of client.conversations.messages.list(conversation.id, { limit: 100 })) {
            check.push(message.id)
            if (check.count === maxMessages) break outer
          }
          deadline.check()
        }
        check.finish(target.expected, maxMessages)
        return check.count
      }),
    close: async () => {
      await client.close()
      await setup?.release()
    },
  }
}

/** The shape of `client.conversations.messages.listAll` in ../shared/API.md ("Every message of the company"). */
type ListAll = (
  params?: { limit?: number; concurrency?: number; cursor?: string },
  options?: { signal?: AbortSignal },
) => AsyncIterable<{ id: string }> & { readonly progress: { done: number; total: number | undefined }; cursor(): string }

/** `listAll` when this SDK build has it, else undefined. */
export function listAllOf(client: ChatServiceClient): ListAll | undefined {
  const messages = client.conversations.messages as unknown as { listAll?: unknown }
  return typeof messages.listAll === 'function' ? (messages.listAll.bind(messages) as ListAll) : undefined
}

/** `client.conversations.messages.listAll({ limit: 100, concurrency })`, iterated message by message. */
export function listAll(target: Target, name: string, concurrency: number, setup?: SdkSetup): ExportContender {
  const client = sdkClient(target, setup?.extra)
  const method = listAllOf(client)
  if (method === undefined) throw new Error('listAll is not implemented in this SDK build')
  return {
    name,
    concurrency,
    run: (budgetMs, maxMessages) =>
      timed(name, budgetMs, async (deadline) => {
        const check = new OrderCheck(name)
        const all = method({ limit: 100, concurrency })
        for await (const message of all) {
          check.push(message.id)
          if (check.count === maxMessages) break
          if ((check.count & 4095) === 0) deadline.check()
        }
        check.finish(target.expected, maxMessages)
        if (maxMessages === undefined && all.progress.done !== check.count)
          throw new Error(`${name}: progress.done is ${all.progress.done} after ${check.count} messages`)
        return check.count
      }),
    close: async () => {
      await client.close()
      await setup?.release()
    },
  }
}

/** The floor: the hand-written raw-undici worker pool (bench/export/raw-pool.ts), asking for `encoding`. */
export function rawPool(target: Target, name: string, concurrency: number, encoding: Encoding): ExportContender {
  const agent: Agent = floorAgent()
  // Compressed responses are decoded by undici's own interceptor, as the SDK is to do it.
  const dispatcher: Dispatcher = encoding === 'identity' ? agent : decompressingFloor(agent)
  const headers = encoding === 'identity' ? identityHeaders : { ...floorHeaders, 'accept-encoding': encoding }
  const body = credentialsBody(target)
  return {
    name,
    concurrency,
    run: (budgetMs, maxMessages) =>
      timed(name, budgetMs, async (deadline) => {
        const check = new OrderCheck(name)
        const pages = rawPoolPages({ dispatcher, origin: target.baseUrl, headers, body, concurrency, limit: 100 })
        outer: for await (const page of pages) {
          for (const message of page) {
            check.push(message.id)
            if (check.count === maxMessages) break outer
          }
          deadline.check()
        }
        check.finish(target.expected, maxMessages)
        return check.count
      }),
    close: () => agent.close(),
  }
}
