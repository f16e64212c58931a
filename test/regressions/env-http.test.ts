// Fixed in 0.2 (found by the second test suite): an http: CHAT_SERVICE_BASE_URL on a non-loopback host is refused without naming the variable.
import { afterEach, expect, it } from 'vitest'
import { ChatServiceClient, RequestValidationError } from 'chat-service-sdk'

const saved = { ...process.env }
afterEach(() => {
  for (const k of Object.keys(process.env)) if (k.startsWith('CHAT_SERVICE_')) Reflect.deleteProperty(process.env, k)
  Object.assign(process.env, saved)
})

it('an http: CHAT_SERVICE_BASE_URL on a non-loopback host: the refusal says it came from CHAT_SERVICE_BASE_URL', () => {
  process.env.CHAT_SERVICE_BASE_URL = 'http://chat.example.com'
  process.env.CHAT_SERVICE_KEY_ID = 'env-key'
  process.env.CHAT_SERVICE_KEY_SECRET = 'ks_env_Zr8pW2mQ7tX4vL9nB1cY'
  let error: unknown
  try {
    new ChatServiceClient()
  } catch (e) {
    error = e
  }
  expect(error).toBeInstanceOf(RequestValidationError)
  expect((error as Error).message).toContain('CHAT_SERVICE_BASE_URL')
})
