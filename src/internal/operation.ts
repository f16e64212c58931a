/**
 * An operation of the spec, described once as data: its endpoint (method and path, from the
 * table in src/endpoints.ts), the schema of its parameters (and which of them travel in the query
 * string), and the schema of its response. Resources declare operations; the pipeline checks,
 * sends and reads them.
 */
import * as z from 'zod'
import type { Endpoint } from '../endpoints.ts'
import { idSchema } from '../schemas/common.ts'
import type { HttpMethod } from './exchange.ts'
import { encodePathSegment } from './url.ts'

/** What {@link defineOperation} takes. */
export interface OperationSpec<Params extends z.ZodType, Result> {
  /** The endpoint it calls: a row of `ENDPOINTS` (src/endpoints.ts). */
  readonly endpoint: Endpoint
  /**
   * The SDK method, named in errors, logs and traces; default the endpoint's `name`. Another
   * method on the same endpoint (`customerUsers.findByExternalId` on the list) gives its own.
   */
  readonly name?: string
  /**
   * Schema of the call's parameters object (`noParamsSchema` for an operation without any), made
   * on the operation's first call (see `madeOnce`): a module-level schema is paid for by every
   * process that imports the SDK.
   */
  readonly params: () => Params
  /** Names of parameters sent in the query string (in this order); the others go in the JSON body. */
  readonly query?: readonly string[]
  /** Schema of a success body, or a function choosing it from the checked parameters; made on the first call, as `params`. */
  readonly response: () => z.ZodType<Result> | ((params: z.output<Params>) => z.ZodType<Result>)
  /** Which statuses are success (default: any 2xx). Token issuance accepts only 200. */
  readonly success?: (status: number) => boolean
  /**
   * What a success body is returned as: `'as-sent'` (default; the body itself, checked) or
   * `'parsed'` (the schema's output: for schemas that transform, such as typed metadata).
   */
  readonly output?: 'as-sent' | 'parsed'
  /** Members of the success body that hold secrets (a chat `token`): every string in them, at any depth, is scrubbed from later errors and logs. */
  readonly secretFields?: readonly string[]
}

/**
 * An operation ready to run: its spec plus what is derived from it once. Its schemas are made on
 * first read and kept (getters): declaring an operation builds none.
 */
export interface Operation<Params extends z.ZodType = z.ZodType, Result = unknown> extends Omit<
  OperationSpec<Params, Result>,
  'params' | 'response'
> {
  /** The SDK method, e.g. `'customerUsers.update'`: named in errors, logs and traces. */
  readonly name: string
  /** Schema of the call's parameters object. */
  readonly params: Params
  /** Schema of a success body, or a function choosing it from the checked parameters. */
  readonly response: z.ZodType<Result> | ((params: z.output<Params>) => z.ZodType<Result>)
  readonly method: HttpMethod
  /** Path below `/rest/v1`, with `{name}` for each path parameter, e.g. `/customer-users/{id}`. */
  readonly path: string
  /** Schema of the path parameters: each a non-empty, well-formed id. */
  readonly pathParams: z.ZodType<Record<string, string>>
  readonly query: readonly string[]
  /**
   * This operation with `extra`'s members added or replaced (a list's `page` factory), its schemas
   * made once for both. Not a spread: a spread would lose the schemas, which are made on first read.
   */
  with<Extra extends object>(extra: Extra): this & Extra
}

/**
 * Describes an operation; call it once per operation, at module load. Its schemas (parameters,
 * path parameters, response) are made when first read, on its first call, and kept.
 */
export function defineOperation<Params extends z.ZodType, Result>(spec: OperationSpec<Params, Result>): Operation<Params, Result> {
  return new DefinedOperation(spec)
}

/**
 * One class for every operation, so that the pipeline's reads of `params`, `response` and
 * `pathParams` meet one getter each (getters of object literals are a function per operation: the
 * pipeline's reads then saw dozens, and every call paid for it, about 1 % in instructions).
 */
class DefinedOperation<Params extends z.ZodType, Result> implements Operation<Params, Result> {
  readonly endpoint: Endpoint
  readonly name: string
  readonly method: HttpMethod
  readonly path: string
  readonly query: readonly string[]
  readonly success?: (status: number) => boolean
  readonly output?: 'as-sent' | 'parsed'
  readonly secretFields?: readonly string[]
  readonly #spec: OperationSpec<Params, Result>
  /** The schemas made so far: shared with the copies {@link DefinedOperation.with} makes. */
  readonly #made: Made<Params, Result>

  constructor(spec: OperationSpec<Params, Result>, made: Made<Params, Result> = {}) {
    this.#spec = spec
    this.#made = made
    this.endpoint = spec.endpoint
    this.name = spec.name ?? spec.endpoint.name
    this.method = spec.endpoint.method
    this.path = spec.endpoint.path
    this.query = spec.query ?? []
    if (spec.success !== undefined) this.success = spec.success
    if (spec.output !== undefined) this.output = spec.output
    if (spec.secretFields !== undefined) this.secretFields = spec.secretFields
  }

  get params(): Params {
    return (this.#made.params ??= this.#spec.params())
  }

  get response(): z.ZodType<Result> | ((params: z.output<Params>) => z.ZodType<Result>) {
    return (this.#made.response ??= this.#spec.response())
  }

  get pathParams(): z.ZodType<Record<string, string>> {
    return (this.#made.pathParams ??= z.strictObject(
      Object.fromEntries([...this.path.matchAll(/\{(\w+)\}/g)].map((match) => [match[1] as string, idSchema()])),
    ))
  }

  with<Extra extends object>(extra: Extra): this & Extra {
    // Own members (a list's `page`) are copied; the schemas stay on the prototype's getters, made once for both.
    return Object.assign(new DefinedOperation(this.#spec, this.#made), this, extra)
  }
}

interface Made<Params extends z.ZodType, Result> {
  params?: Params
  response?: z.ZodType<Result> | ((params: z.output<Params>) => z.ZodType<Result>)
  pathParams?: z.ZodType<Record<string, string>>
}

/** The path of a call: parameters percent-encoded as one segment each. */
export function fillPath(template: string, pathParams: Readonly<Record<string, string>>): string {
  // A path without parameters (a list of agents) skips the regular expression: a replace with a
  // function calls into the runtime, on every call (issue 32).
  if (!template.includes('{')) return template
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodePathSegment(pathParams[name] ?? ''))
}

/** Splits checked parameters into query-string entries and JSON body members (`undefined` when none). */
export function splitParams(
  params: Readonly<Record<string, unknown>>,
  query: readonly string[],
): { query: Record<string, string | number>; members: Record<string, unknown> | undefined } {
  const inQuery: Record<string, string | number> = {}
  let members: Record<string, unknown> | undefined
  // for-in, not Object.entries: no array of pairs per call (issue 32); own keys only, as it.
  for (const name in params) {
    if (!Object.hasOwn(params, name)) continue
    const value = params[name]
    if (value === undefined) continue
    if (query.includes(name)) inQuery[name] = value as string | number
    else (members ??= {})[name] = value
  }
  return { query: inQuery, members }
}
