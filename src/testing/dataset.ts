// Deterministic, realistic test data for the fake (`generateDataset`).
//
// Uses a small seeded PRNG (mulberry32), never `Math.random`: the same options
// give deep-equal data. Strings that repeat (message texts, roles, conversation
// ids inside messages) are shared, so a million messages stay compact.
import type { AgentRecord, CompanySeed, ConversationSeed, CustomerUserSeed, FakeSeed, MessageRecord } from './types.ts'

/** Options of {@link generateDataset}. Counts are PER COMPANY. */
export interface GenerateDatasetOptions {
  /** PRNG seed (any finite number; it is folded to 32 bits). */
  seed: number
  /** Agents per company. Default 5 (about a quarter inactive; the first is always active). */
  agents?: number | undefined
  /** Customer users per company. Default 50. */
  customerUsers?: number | undefined
  /** Conversations per company. Default 100; needs at least one customer user. */
  conversations?: number | undefined
  /** Messages per company, spread unevenly over its conversations. Default 1000. */
  messages?: number | undefined
  /** Number of companies. Default 1. */
  companies?: number | undefined
}

/** 32-bit seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function foldSeed(seed: number, company: number): number {
  // Mix the user's seed with the company index; works for floats and big numbers.
  let h = 0x811c9dc5
  for (const ch of `${seed}:${company}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193)
  return h >>> 0
}

const FIRST_NAMES = [
  'Alice',
  'Bruno',
  'Chiara',
  'Dmitri',
  'Emma',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Keira',
  'Liam',
  'Maya',
  'Noah',
  'Olga',
  'Pedro',
  'Quinn',
  'Rosa',
  'Samir',
  'Tara',
  'Umar',
  'Vera',
  'Wei',
  'Ximena',
  'Yusuf',
  'Zoe',
] as const
const LAST_NAMES = [
  'Anderson',
  'Berg',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Hansen',
  'Ito',
  'Jensen',
  'Kowalski',
  'Lopez',
  'Müller',
  'Nakamura',
  'Okafor',
  'Petrov',
  'Rossi',
  'Schmidt',
  'Tanaka',
  'Novak',
] as const
const DOMAINS = ['example.com', 'example.org', 'example.net'] as const
const PLANS = ['free', 'starter', 'pro', 'enterprise'] as const
const LOCALES = ['en-US', 'en-GB', 'de-DE', 'fr-FR', 'es-ES', 'ja-JP'] as const
const SOURCES = ['web', 'ios', 'android', 'referral', 'partner'] as const
const CHANNELS = ['email', 'sms', 'push'] as const
const COMPANY_NAMES = ['Acme Corp', 'Globex', 'Initech', 'Umbrella Retail', 'Stark Logistics', 'Wayne Travel', 'Hooli'] as const
const AGENT_NAMES = [
  'Support Assistant',
  'Sales Assistant',
  'Billing Helper',
  'Onboarding Guide',
  'Tech Support Bot',
  'Returns Desk',
  'Booking Assistant',
  'Account Manager Bot',
] as const
const TITLES = [
  'Order status question',
  'Password reset',
  'Refund request',
  'Shipping delay',
  'Upgrade my plan',
  'Invoice copy needed',
  'Cannot log in',
  'Change delivery address',
  'Product recommendation',
  'Cancel subscription',
  'Technical issue with the app',
  'Warranty claim',
  'Update payment method',
  'Question about pricing',
  'Account verification',
] as const
const USER_TEXTS = [
  'Hi, where is my order? It was supposed to arrive yesterday.',
  'I forgot my password and the reset e-mail never arrives.',
  'Can I get a refund for my last purchase?',
  'How do I upgrade to the pro plan?',
  'Could you send me a copy of my latest invoice?',
  'The app crashes every time I open the settings page.',
  'I need to change the delivery address for my order.',
  'Which plan would you recommend for a team of ten?',
  'Please cancel my subscription at the end of this month.',
  'Is there a discount for annual billing?',
  'My card was charged twice, can you check?',
  'Thanks, that worked!',
  'Can you explain the difference between the plans?',
  'I still have not received the confirmation e-mail.',
  'Okay. What do I need to do next?',
  'How long does shipping to Germany usually take?',
] as const
const ASSISTANT_TEXTS = [
  'Thanks for reaching out! Let me look into that for you.',
  'I have found your order. It is in transit and should arrive within two business days.',
  'I have sent a new password reset link. Please also check your spam folder.',
  'Refunds are processed within 5 to 7 business days after approval.',
  'You can upgrade at any time under Settings > Billing > Change plan.',
  'I have e-mailed the invoice to the address on your account.',
  'Sorry about that. Could you tell me which app version you are using?',
  'Done! The delivery address has been updated.',
  'For a team of ten, the pro plan is usually the best fit.',
  'Your subscription will end at the close of the current billing period.',
  'Yes, annual billing comes with two months free.',
  'I can see two charges; the duplicate will be reversed automatically.',
  'Is there anything else I can help you with?',
  'You are welcome! Have a great day.',
] as const

function pick<T>(rng: () => number, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)] as T
}

function count(name: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`generateDataset: ${name} must be an integer >= 0`)
  return n
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0')
const MINUTE = 60_000
const DAY = 86_400_000

/**
 * `new Date(ms).toISOString()`, about ten times faster: the date part is
 * cached per day and the time is written as ASCII digits into a small buffer,
 * which also yields a flat (compact) string. Falls back to `toISOString()`
 * outside years 0000-9999.
 */
export function makeIso(): (ms: number) => string {
  const buf = Buffer.alloc(24)
  let cachedDay = Number.NaN
  let fallback = false
  return (ms) => {
    const day = Math.floor(ms / DAY)
    if (day !== cachedDay) {
      const text = new Date(day * DAY).toISOString()
      fallback = text.length !== 24
      if (!fallback) buf.write(text, 0, 'latin1')
      cachedDay = day
    }
    if (fallback) return new Date(ms).toISOString()
    let rest = ms - day * DAY
    const h = Math.floor(rest / 3_600_000)
    rest -= h * 3_600_000
    const m = Math.floor(rest / MINUTE)
    rest -= m * MINUTE
    const sec = Math.floor(rest / 1000)
    const milli = Math.floor(rest - sec * 1000)
    buf[11] = 48 + Math.floor(h / 10)
    buf[12] = 48 + (h % 10)
    buf[14] = 48 + Math.floor(m / 10)
    buf[15] = 48 + (m % 10)
    buf[17] = 48 + Math.floor(sec / 10)
    buf[18] = 48 + (sec % 10)
    buf[20] = 48 + Math.floor(milli / 100)
    buf[21] = 48 + (Math.floor(milli / 10) % 10)
    buf[22] = 48 + (milli % 10)
    return buf.toString('latin1', 0, 24)
  }
}

/**
 * Generates a deterministic dataset: the same options give deep-equal data,
 * another seed gives other data.
 *
 * Shape: company `k` (1-based) has id `comp_k`, one key
 * `{ keyId: 'key_test_k', keySecret: 'sk_test_<32 hex>' }` (so the first
 * company's key is `key_test_1`), and its own agents, users, conversations and
 * messages. Ids are unique across companies: `agt_001`, `cu_00001`,
 * `conv_00001`, `msg_0000001`, external ids `ext_00001`, numbered on from one
 * company to the next. Timestamps are ISO 8601, increasing in creation order;
 * each conversation's messages alternate `user`/`assistant` (user first) and
 * its `message_count`/`updated_at` match them. Company `k`'s data depends only
 * on `seed` and `k`, not on the number of companies.
 *
 * Cost: well under a second and roughly 150 bytes per message for 1,000,000 messages.
 */
export function generateDataset(opts: GenerateDatasetOptions): FakeSeed {
  // Checked at run time: JavaScript callers may pass nothing, or no numeric seed.
  const given = opts as Partial<GenerateDatasetOptions> | undefined
  if (typeof given?.seed !== 'number' || !Number.isFinite(given.seed)) throw new RangeError('generateDataset: seed must be a finite number')
  const n = {
    agents: count('agents', opts.agents, 5),
    users: count('customerUsers', opts.customerUsers, 50),
    conversations: count('conversations', opts.conversations, 100),
    messages: count('messages', opts.messages, 1000),
    companies: count('companies', opts.companies, 1),
  }
  if (n.conversations > 0 && n.users === 0) throw new RangeError('generateDataset: conversations need at least one customer user')
  if (n.messages > 0 && n.conversations === 0) throw new RangeError('generateDataset: messages need at least one conversation')
  const width = {
    agents: Math.max(3, String(n.agents * n.companies).length),
    users: Math.max(5, String(n.users * n.companies).length),
    conversations: Math.max(5, String(n.conversations * n.companies).length),
    messages: Math.max(7, String(n.messages * n.companies).length),
  }
  const companies: CompanySeed[] = []
  for (let k = 1; k <= n.companies; k++) companies.push(generateCompany(opts.seed, k, n, width))
  return { companies }
}

interface Counts {
  agents: number
  users: number
  conversations: number
  messages: number
}

function generateCompany(seed: number, k: number, n: Counts, width: Counts): CompanySeed {
  const rng = mulberry32(foldSeed(seed, k))
  const iso = makeIso()
  let secret = ''
  for (let i = 0; i < 4; i++)
    secret += Math.floor(rng() * 0x100000000)
      .toString(16)
      .padStart(8, '0')
  const base = Date.UTC(2024, 0, 1) + Math.floor(rng() * 60) * DAY

  // Agents: created over the 90 days before `base`.
  const agents: AgentRecord[] = []
  let t = base - 90 * DAY
  for (let i = 0; i < n.agents; i++) {
    t += Math.floor((0.2 + rng()) * DAY)
    const updated = t + Math.floor(rng() * 20 * DAY)
    const number = (k - 1) * n.agents + i + 1
    const name = AGENT_NAMES[i % AGENT_NAMES.length] as string
    agents.push({
      id: `agt_${pad(number, width.agents)}`,
      name: i < AGENT_NAMES.length ? name : `${name} ${Math.floor(i / AGENT_NAMES.length) + 1}`,
      active: i === 0 || rng() >= 0.25,
      created_at: iso(t),
      updated_at: iso(updated),
    })
  }
  if (agents.length >= 2 && agents.every((a) => a.active)) (agents[agents.length - 1] as AgentRecord).active = false

  // Customer users: created from `base` on, 10 minutes to 3 hours apart.
  const users: CustomerUserSeed[] = []
  const lastSeen: number[] = []
  t = base
  for (let i = 0; i < n.users; i++) {
    t += Math.floor((10 + rng() * 170) * MINUTE)
    const number = (k - 1) * n.users + i + 1
    const first = pick(rng, FIRST_NAMES)
    const last = pick(rng, LAST_NAMES)
    const local = `${first}.${last}`
      .toLowerCase()
      .normalize('NFD')
      .replace(/[^a-z.]/g, '')
    const metadata: Record<string, unknown> = {
      version: 1,
      plan: pick(rng, PLANS),
      locale: pick(rng, LOCALES),
      preferences: {
        newsletter: rng() < 0.4,
        channels: CHANNELS.filter(() => rng() < 0.5),
      },
      signup: { source: pick(rng, SOURCES), year: new Date(t).getUTCFullYear() },
    }
    if (rng() < 0.3) metadata['tags'] = ['vip', 'beta', 'churn-risk'].filter(() => rng() < 0.5)
    users.push({
      id: `cu_${pad(number, width.users)}`,
      external_id: `ext_${pad(number, width.users)}`,
      name: `${first} ${last}`,
      email: `${local}${number}@${pick(rng, DOMAINS)}`,
      metadata,
      active: rng() >= 0.1,
      created_at: iso(t),
      last_seen_at: '',
      updated_at: iso(t),
    })
    lastSeen.push(t)
  }

  // Message counts per conversation: uneven weights that add up exactly.
  const weights: number[] = []
  let weightSum = 0
  for (let i = 0; i < n.conversations; i++) {
    const w = 0.25 + rng() * rng() * 3
    weights.push(w)
    weightSum += w
  }
  const perConversation = weights.map((w) => Math.floor((n.messages * w) / weightSum))
  let remainder = n.messages - perConversation.reduce((a, b) => a + b, 0)
  for (let i = 0; remainder > 0; i = (i + 1) % perConversation.length, remainder--) {
    perConversation[i] = (perConversation[i] as number) + 1
  }

  // Conversations and their messages, one after another in time.
  const conversations: ConversationSeed[] = []
  const messages: MessageRecord[] = []
  t += 60 * MINUTE
  let messageNumber = (k - 1) * n.messages
  for (let i = 0; i < n.conversations; i++) {
    t += Math.floor((1 + rng() * 29) * MINUTE)
    const created = t
    const number = (k - 1) * n.conversations + i + 1
    const id = `conv_${pad(number, width.conversations)}`
    const userIndex = Math.floor(rng() * n.users)
    const user = users[userIndex] as CustomerUserSeed
    const messageTotal = perConversation[i] as number
    for (let j = 0; j < messageTotal; j++) {
      t += 3_000 + Math.floor(rng() * 30_000)
      messageNumber++
      const isUser = (j & 1) === 0
      messages.push({
        id: `msg_${pad(messageNumber, width.messages)}`,
        content: isUser ? pick(rng, USER_TEXTS) : pick(rng, ASSISTANT_TEXTS),
        role: isUser ? 'user' : 'assistant',
        conversation_id: id,
        created_at: iso(t),
      })
    }
    conversations.push({
      id,
      title: pick(rng, TITLES),
      customer_user_id: user.id,
      message_count: messageTotal,
      created_at: iso(created),
      updated_at: iso(t),
    })
    if (t > (lastSeen[userIndex] as number)) lastSeen[userIndex] = t
  }
  for (let i = 0; i < users.length; i++) (users[i] as CustomerUserSeed).last_seen_at = iso(lastSeen[i] as number)

  return {
    id: `comp_${k}`,
    name: COMPANY_NAMES[(k - 1) % COMPANY_NAMES.length],
    keys: [{ keyId: `key_test_${k}`, keySecret: `sk_test_${secret}` }],
    agents,
    customerUsers: users,
    conversations,
    messages,
  }
}
