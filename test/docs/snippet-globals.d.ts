// What every README snippet may use without declaring it (test/docs/readme-snippets.test.ts sets
// them): a client on the fake, and a conversation that has messages. Nothing else.
import type { ChatServiceClient } from 'chat-service-sdk'

declare global {
  /** A client on the fake service (listen mode), made from the CHAT_SERVICE_* environment. */
  var client: ChatServiceClient
  /** The id of a conversation of the fake that has messages. */
  var conversationId: string
}
