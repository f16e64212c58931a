/** The types of the service's resources and of each operation's parameters, as users import them. */
export type { Agent } from './agent.ts'
export type { IssueTokenParams, IssueTokenResponse } from './auth.ts'
export { MAX_LIMIT, type PageParams, type Pagination } from './common.ts'
export type { Conversation } from './conversation.ts'
export type {
  CustomerUser,
  CustomerUserListParams,
  CustomerUserUpdateFields,
  CustomerUserUpdateParams,
  UpdatedCustomerUser,
} from './customer-user.ts'
export type { Message } from './message.ts'
