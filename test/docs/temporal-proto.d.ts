// A stand-in for @temporalio/proto in the snippets' type-check (snippet-types.ts): the protobuf
// types of Temporal's gRPC API, 8.9 MB of declarations that @temporalio/common imports and that
// took ~1 s of every run to parse. docs/nightly.md's activity uses `Context` of
// @temporalio/activity (its info, heartbeat and cancellation signal), whose declarations stay the
// real ones: none of what it touches is a protobuf type (a misspelt member, a wrong argument count
// or type there fails the check with or without this file). Declarations that name a protobuf type
// get an unresolved name instead, which `skipLibCheck` does not report and the snippets never meet.
export {}
