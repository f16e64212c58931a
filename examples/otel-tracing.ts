import { tracingChannel } from 'node:diagnostics_channel'
import { context, trace, SpanStatusCode, type ContextManagementToken, type Span, type Tracer } from '@opentelemetry/api'
import { TRACING_CHANNEL, type RequestTrace } from 'chat-service-sdk'

/** One span per SDK call, parent of the HTTP spans of its attempts. Returns a function that stops it. */
export function instrumentChatServiceSdk(tracer: Tracer): () => void {
  const channel = tracingChannel<unknown, RequestTrace>(TRACING_CHANNEL)
  const spans = new WeakMap<RequestTrace, { span: Span; scope: ContextManagementToken }>()
  const subscribers = {
    start(call: RequestTrace) {
      const [path = call.path, query] = call.path.split('?')
      const span = tracer.startSpan(call.operation, {
        attributes: {
          'chat_service.operation': call.operation,
          'http.request.method': call.method,
          'url.path': path,
          ...(query === undefined ? {} : { 'url.query': query }),
        },
      })
      // start and end bracket the synchronous start of the call, from which all its attempts continue:
      // the span is the active context in between, so the undici instrumentation's spans nest under it.
      spans.set(call, { span, scope: context.attach(trace.setSpan(context.active(), span)) })
    },
    end(call: RequestTrace) {
      spans.get(call)?.scope.dispose()
    },
    asyncStart() {}, // nothing to do, but subscribe() takes all five
    error(call: RequestTrace) {
      if (call.outcome === 'cancelled') return // a page the SDK itself no longer needed: not a failure
      const span = spans.get(call)?.span
      const error = call.error instanceof Error ? call.error : new Error(String(call.error))
      span?.recordException(error) // the SDK's errors have every secret scrubbed
      span?.setAttribute('error.type', error.name)
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error.message })
    },
    asyncEnd(call: RequestTrace) {
      const span = spans.get(call)?.span
      spans.delete(call)
      span?.setAttribute('chat_service.attempts', call.attempts)
      if (call.status !== undefined) span?.setAttribute('http.response.status_code', call.status)
      if (call.requestId !== undefined) span?.setAttribute('chat_service.request_id', call.requestId)
      if (call.outcome !== undefined) span?.setAttribute('chat_service.outcome', call.outcome)
      span?.end()
    },
  }
  channel.subscribe(subscribers)
  return () => {
    channel.unsubscribe(subscribers)
  }
}
