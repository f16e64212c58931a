// Shared by the examples: a client for the real service when CHAT_SERVICE_BASE_URL,
// CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET are set, else for the embedded fake service
// seeded with a realistic generated dataset.
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'

export interface Connection {
  client: ChatServiceClient
  /** What the client talks to, for the reader. */
  description: string
  /** Releases the client and, for the fake, its server. */
  close: () => Promise<void>
}

/** The port of the embedded fake that command-line examples start (4010 is `npx chat-service-fake`'s). */
const EMBEDDED_FAKE_PORT = 4011

/** Volumes of the embedded fake's dataset. */
export const FAKE_VOLUMES = { agents: 5, customerUsers: 500, conversations: 60, messages: 10_000 }

/** The service a command-line job talks to: its `CHAT_SERVICE_*` environment, and how to stop it. */
export interface ServiceEnvironment {
  /** `CHAT_SERVICE_BASE_URL`, `CHAT_SERVICE_KEY_ID` and `CHAT_SERVICE_KEY_SECRET`. */
  env: Record<string, string>
  /** What it is, for the reader. */
  description: string
  /** Stops the embedded fake, if one was started. */
  close: () => Promise<void>
}

/**
 * The environment of the real service when CHAT_SERVICE_BASE_URL, CHAT_SERVICE_KEY_ID and
 * CHAT_SERVICE_KEY_SECRET are set; else the embedded fake's (started here, with the same dataset as
 * {@link connect}). For examples that run the `chat-service` command, which reads only the environment.
 */
export async function serviceEnvironment(): Promise<ServiceEnvironment> {
  const { CHAT_SERVICE_BASE_URL: baseUrl, CHAT_SERVICE_KEY_ID: keyId, CHAT_SERVICE_KEY_SECRET: keySecret } = process.env
  if (baseUrl && keyId && keySecret) {
    return { env: {}, description: `the service at ${baseUrl}`, close: async () => {} }
  }
  const seed = generateDataset({ seed: 42, ...FAKE_VOLUMES })
  const key = seed.companies[0]?.keys[0]
  if (key === undefined) throw new Error('generated dataset has no API key')
  // One port from run to run: the command's state files name the service they belong to (its base
  // URL), so a run stopped now is resumed by the next only if that one talks to the same URL.
  const fake = createFakeChatService({ seed })
  const server = await fake.listen({ port: EMBEDDED_FAKE_PORT }).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error
    return fake.listen()
  })
  const { agents, customerUsers, conversations, messages } = FAKE_VOLUMES
  const moved =
    new URL(server.url).port === String(EMBEDDED_FAKE_PORT)
      ? ''
      : ` (port ${EMBEDDED_FAKE_PORT} was taken: the next run gets another port, so it cannot go on from this one's state files)`
  return {
    env: { CHAT_SERVICE_BASE_URL: server.url, CHAT_SERVICE_KEY_ID: key.keyId, CHAT_SERVICE_KEY_SECRET: key.keySecret },
    description:
      `the embedded fake service at ${server.url}${moved} (CHAT_SERVICE_BASE_URL, CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET are not all set), ` +
      `seeded with ${agents} agents, ${customerUsers} customer users, ${conversations} conversations and ${messages} messages`,
    close: () => server.close(),
  }
}

export async function connect(): Promise<Connection> {
  const { CHAT_SERVICE_BASE_URL: baseUrl, CHAT_SERVICE_KEY_ID: keyId, CHAT_SERVICE_KEY_SECRET: keySecret } = process.env
  if (baseUrl && keyId && keySecret) {
    const client = new ChatServiceClient({ baseUrl, keyId, keySecret })
    return { client, description: `the service at ${client.baseUrl}`, close: () => client.close() }
  }
  const seed = generateDataset({ seed: 42, ...FAKE_VOLUMES })
  const key = seed.companies[0]?.keys[0]
  if (key === undefined) throw new Error('generated dataset has no API key')
  const fake = createFakeChatService({ seed })
  const server = await fake.listen()
  const client = new ChatServiceClient({ baseUrl: server.url, keyId: key.keyId, keySecret: key.keySecret })
  const { agents, customerUsers, conversations, messages } = FAKE_VOLUMES
  return {
    client,
    description:
      `the embedded fake service at ${server.url} (CHAT_SERVICE_BASE_URL, CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET are not all set), ` +
      `seeded with ${agents} agents, ${customerUsers} customer users, ${conversations} conversations and ${messages} messages`,
    close: async () => {
      await client.close()
      await server.close()
    },
  }
}
