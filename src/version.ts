/**
 * The version of `chat-service-sdk` in use. It equals the package's `package.json` version and is
 * sent in every request's `user-agent` header as `chat-service-sdk/<VERSION> node/<node version>`.
 */
export const VERSION = '0.3.0'
