/** Sample credentials and service payloads shaped as the spec describes. */

export const KEY_ID = 'key-id-8Hq2Zt'
/** Long and distinctive, so that finding it in text is meaningful. */
export const KEY_SECRET = 'ks_live_Q9vX3mR7pL2wT8nB5cY1'
/** An origin msw intercepts (never resolved for real). */
export const BASE = 'https://chat.test'
export const API = `${BASE}/rest/v1`

export function agent(i: number): Record<string, unknown> {
  return {
    id: `agent-${i}`,
    name: `Agent ${i}`,
    active: i % 2 === 0,
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-02T00:00:00Z',
  }
}

export function conversation(i: number): Record<string, unknown> {
  return {
    id: `conv-${i}`,
    title: `Conversation ${i}`,
    customer_user_id: `cu-${i}`,
    message_count: i,
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-02T00:00:00Z',
  }
}

export function customerUser(i: number): Record<string, unknown> {
  return {
    id: `cu-${i}`,
    external_id: `ext-${i}`,
    name: `User ${i}`,
    email: `user${i}@example.com`,
    metadata: { plan: 'pro', nested: { level: i } },
    active: true,
    created_at: '2024-01-01T00:00:00Z',
    last_seen_at: '2024-02-01T00:00:00Z',
  }
}

export function message(i: number, conversationId = 'conv-1'): Record<string, unknown> {
  return {
    id: `msg-${i}`,
    content: `Message ${i}`,
    role: i % 2 === 0 ? 'assistant' : 'user',
    conversation_id: conversationId,
    created_at: `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`,
  }
}

export function updatedUser(id = 'cu-1'): Record<string, unknown> {
  return {
    id,
    external_id: 'ext-1',
    name: 'New Name',
    email: 'new@example.com',
    metadata: { plan: 'pro' },
    active: true,
    updated_at: '2024-03-01T00:00:00Z',
  }
}

export function tokenResponse(token = 'tok_signed_abc.def.ghi'): Record<string, unknown> {
  return {
    token,
    user: { id: 'cu-1', externalId: 'ext-1', companyId: 'company-1', agentId: 'agent-2' },
    agent: { id: 'agent-2', name: 'Agent 2', active: true },
  }
}

export function pagination(page: number, limit: number, total: number): Record<string, number> {
  return { page, limit, total, total_pages: Math.ceil(total / limit) }
}

/** A list body: `{ data, pagination }` (plus `extra` members). */
export function listBody(
  data: unknown[],
  page = 1,
  limit = 20,
  total = data.length,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { data, pagination: pagination(page, limit, total), ...extra }
}

/** An empty list body for any list endpoint (messages need `conversation` too). */
export function emptyListFor(pathname: string): Record<string, unknown> {
  return pathname.endsWith('/messages') ? listBody([], 1, 50, 0, { conversation: { id: 'conv-1', title: 'T' } }) : listBody([], 1, 20, 0)
}
