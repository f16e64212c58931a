// The namespace `resources` of the package root, a declaration only: nothing here exists at run
// time (`export type` from src/index.ts). Its classes are made by the SDK (their constructors are
// private) and reached through the client; users name them rarely, as types, so they stay out of the
// root's names. A value `instanceof` may test (a page) stays at the root.
import type {
  ListAllIterable as ListAllIterableClass,
  ListRepairs as ListRepairsType,
  MessagesRepairs as MessagesRepairsType,
} from '../pagination/list-all.ts'
import type { ListNewSummary as ListNewSummaryType, NewMessages as NewMessagesClass } from '../pagination/list-new.ts'
import type { Agents as AgentsClass } from './agents.ts'
import type { Auth as AuthClass } from './auth.ts'
import type { Conversations as ConversationsClass } from './conversations.ts'
import type {
  CustomerUsers as CustomerUsersClass,
  MetadataOptions as MetadataOptionsType,
  SkippedCustomerUser as SkippedCustomerUserType,
} from './customer-users.ts'
import type { ConversationMessages as ConversationMessagesClass } from './messages.ts'

/**
 * The classes of the client's resources and of the listings their methods return, as types: the
 * SDK makes them, you reach them through the client and name them rarely. `client.agents` is a
 * `resources.Agents`; `client.customerUsers.withMetadata(schema)` returns a
 * `resources.CustomerUsers<Metadata>`; `client.conversations.messages.listAll()` a
 * `resources.ListAllIterable` (also named {@link AllMessages}), `listNew()` a
 * `resources.NewMessages`; with the types of their members: `resources.MetadataOptions`
 * (`withMetadata`'s options), `resources.SkippedCustomerUser` (a page's `skipped`, `onSkip`'s
 * argument), `resources.ListNewSummary` (`NewMessages.summary`), `resources.ListRepairs` and
 * `resources.MessagesRepairs` (what a listing repaired while the list moved: `.repairs`). (Pages, which you may test with
 * `instanceof`, are at the root: `Page`, `MessagePage`, `CustomerUserPage`.)
 */
// eslint-disable-next-line @typescript-eslint/no-namespace -- a declaration only: ES modules cannot group types under one root name
export declare namespace resources {
  export {
    AgentsClass as Agents,
    AuthClass as Auth,
    ConversationsClass as Conversations,
    ConversationMessagesClass as ConversationMessages,
    CustomerUsersClass as CustomerUsers,
    ListAllIterableClass as ListAllIterable,
    NewMessagesClass as NewMessages,
    MetadataOptionsType as MetadataOptions,
    SkippedCustomerUserType as SkippedCustomerUser,
    ListNewSummaryType as ListNewSummary,
    ListRepairsType as ListRepairs,
    MessagesRepairsType as MessagesRepairs,
  }
}
