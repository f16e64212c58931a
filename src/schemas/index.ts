/** The types of the service's resources and of each operation's parameters, as users import them. */
export type { Agent, AgentListParams } from './agent.ts'
export type { BoundIssueTokenResponse, ExpiresIn, IssueTokenParams, IssueTokenResponse, TokenAgent, TokenUser } from './auth.ts'
export { MAX_LIMIT, type PageParams, type Pagination } from './common.ts'
export type { Conversation, ConversationListParams } from './conversation.ts'
export type {
  CustomerUser,
  CustomerUserListParams,
  CustomerUserMetadata,
  CustomerUserUpdateFields,
  CustomerUserUpdateParams,
  UpdatedCustomerUser,
} from './customer-user.ts'
export type { Message, MessageConversation, MessageListParams, MessageRole } from './message.ts'
