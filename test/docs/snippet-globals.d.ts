// What every snippet of README.md and docs/*.md may use without declaring it (test/docs/snippets.test.ts sets
// them): a client on the fake, a conversation that has messages, and the part of an ioredis
// client the "One rate limit across processes" snippet uses (an in-memory one). Nothing else.
import type { ChatServiceClient } from 'chat-service-sdk'

declare global {
  /** A client on the fake service (listen mode), made from the CHAT_SERVICE_* environment. */
  var client: ChatServiceClient
  /** The id of a conversation of the fake that has messages. */
  var conversationId: string
  /** What the README's Redis store uses of an ioredis client, with ioredis's signatures (the test passes an in-memory stand-in). */
  var redis: {
    get(key: string): Promise<string | null>
    eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>
  }
}
