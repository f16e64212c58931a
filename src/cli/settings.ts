/**
 * The command's settings and where each came from: `--base-url`, the environment, or the file of
 * `--env-file` (whose variables fill in only what the environment does not set, as with Node's own
 * `--env-file`). Errors that depend on a setting (a refused connection, a 401, a state file of
 * another service) end with {@link describeSettings}, so that a stale exported
 * `CHAT_SERVICE_BASE_URL` that beats `--env-file` is seen at once. Never a secret's value.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { parseEnv } from 'node:util'
import { ChatServiceClient } from 'chat-service-sdk'
import { stringOption, type Values } from './args.ts'

/** The variable that allows plain http to a host that is not loopback (`1` or `true`; `0`, `false` or empty: not). */
export const ALLOW_INSECURE_HTTP_VARIABLE = 'CHAT_SERVICE_ALLOW_INSECURE_HTTP'

/** Where a setting came from. */
export type Source =
  | { readonly kind: 'flag'; readonly flag: string }
  | { readonly kind: 'environment'; readonly variable: string }
  | { readonly kind: 'env-file'; readonly path: string; readonly variable: string }
  | { readonly kind: 'unset' }

/** One setting: its value, where it came from, and the value of `--env-file` it overrode, if any. */
export interface Setting {
  readonly value: string | undefined
  readonly source: Source
  /** `--env-file`'s own value, when the environment (or a flag) set another one that won. */
  readonly shadowed?: { readonly path: string; readonly value: string } | undefined
}

/** Every setting of a run. */
export interface Settings {
  readonly baseUrl: Setting
  readonly keyId: Setting
  readonly keySecret: Setting
  readonly allowInsecureHttp: Setting & { readonly enabled: boolean }
}

/** A setting that cannot be used: exit status 1 with this message. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError'
}

/**
 * `--env-file FILE`: its `CHAT_SERVICE_*` variables (Node's `.env` syntax). Others in it are left alone.
 * @throws Error when it cannot be read
 */
function readEnvFile(path: string): Record<string, string> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new ConfigurationError(`cannot read --env-file ${path}: ${typeof code === 'string' ? code : String(error)}`, { cause: error })
  }
  const values: Record<string, string> = {}
  for (const [name, value] of Object.entries(parseEnv(text)))
    if (name.startsWith('CHAT_SERVICE_') && value !== undefined) values[name] = value
  return values
}

/** One variable: the environment's value, else the file's. */
function fromVariable(
  variable: string,
  env: NodeJS.ProcessEnv,
  file: { path: string; values: Record<string, string> } | undefined,
): Setting {
  const fromFile = file?.values[variable]
  const set = env[variable]
  if (set !== undefined) {
    const shadowed = file !== undefined && fromFile !== undefined && fromFile !== set ? { path: file.path, value: fromFile } : undefined
    return { value: set, source: { kind: 'environment', variable }, shadowed }
  }
  if (file !== undefined && fromFile !== undefined) return { value: fromFile, source: { kind: 'env-file', path: file.path, variable } }
  return { value: undefined, source: { kind: 'unset' } }
}

/**
 * Reads the settings of a run from its options and `env`; then fills `env` with the variables of
 * `--env-file` it lacks (the SDK reads some itself, such as CHAT_SERVICE_LOG). @throws ConfigurationError
 */
export function readSettings(values: Values, env: NodeJS.ProcessEnv): Settings {
  const envFile = stringOption(values, 'env-file')
  const file = envFile === undefined ? undefined : { path: envFile, values: readEnvFile(envFile) }
  const variableBaseUrl = fromVariable(ChatServiceClient.ENVIRONMENT_VARIABLES.baseUrl, env, file)
  const flag = stringOption(values, 'base-url')
  const fileBaseUrl = file?.values[ChatServiceClient.ENVIRONMENT_VARIABLES.baseUrl]
  const baseUrl: Setting =
    flag === undefined
      ? variableBaseUrl
      : {
          value: flag,
          source: { kind: 'flag', flag: '--base-url' },
          shadowed:
            file !== undefined && fileBaseUrl !== undefined && fileBaseUrl !== flag ? { path: file.path, value: fileBaseUrl } : undefined,
        }
  const insecureVariable = fromVariable(ALLOW_INSECURE_HTTP_VARIABLE, env, file)
  const allowInsecureHttp =
    values['allow-insecure-http'] === true
      ? { value: '1', source: { kind: 'flag', flag: '--allow-insecure-http' } as const, enabled: true }
      : { ...insecureVariable, enabled: insecureFlag(insecureVariable) }
  const settings = {
    baseUrl,
    keyId: fromVariable(ChatServiceClient.ENVIRONMENT_VARIABLES.keyId, env, file),
    keySecret: fromVariable(ChatServiceClient.ENVIRONMENT_VARIABLES.keySecret, env, file),
    allowInsecureHttp,
  }
  for (const [name, value] of Object.entries(file?.values ?? {})) env[name] ??= value
  return settings
}

/** CHAT_SERVICE_ALLOW_INSECURE_HTTP as a switch. @throws ConfigurationError for a value that is neither */
function insecureFlag(setting: Setting): boolean {
  const value = (setting.value ?? '').trim().toLowerCase()
  if (value === '1' || value === 'true') return true
  if (value === '' || value === '0' || value === 'false') return false
  throw new ConfigurationError(
    `${ALLOW_INSECURE_HTTP_VARIABLE} must be 1 (or true) to allow plain http to a host that is not loopback, or 0 (false, empty) not to; not ${JSON.stringify(setting.value)} (${sourceText(setting.source)})`,
  )
}

/** `from the environment (CHAT_SERVICE_BASE_URL)`, `from --env-file prod.env`, `from --base-url`. */
export function sourceText(source: Source): string {
  switch (source.kind) {
    case 'flag':
      return `from ${source.flag}`
    case 'environment':
      return `from the environment (${source.variable})`
    case 'env-file':
      return `from --env-file ${source.path} (${source.variable})`
    case 'unset':
      return 'not set'
  }
}

function line(label: string, setting: Setting, showValue: boolean): string {
  const value = showValue && setting.value !== undefined ? ` ${setting.value}` : ''
  const shadowed =
    setting.shadowed === undefined
      ? ''
      : `; --env-file ${setting.shadowed.path} sets ${showValue ? setting.shadowed.value : 'another one'}, which ${setting.source.kind === 'flag' ? 'the flag overrides' : 'a variable set in the environment overrides'}`
  return `settings: ${label}${value} ${sourceText(setting.source)}${shadowed}`
}

/** Where the base URL, the key id and the key secret came from, one line each (the secret's value never). */
export function describeSettings(settings: Settings): string {
  return [
    line('base URL', settings.baseUrl, true),
    line('key id', settings.keyId, true),
    line('key secret', settings.keySecret, false),
  ].join('\n')
}

/** The base URL's lines only. */
export function describeBaseUrl(settings: Settings): string {
  return line('base URL', settings.baseUrl, true)
}

/** Whether `hostname` is loopback, by the SDK's rule (`localhost`, `*.localhost`, `127.0.0.0/8`, `::1`). */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}

/** The host of `url` when it is plain http to a host that is not loopback, else `undefined` (https, loopback, or not a URL: the SDK says why). */
export function insecureHost(url: string | undefined): string | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined
  const parsed = new URL(url)
  return parsed.protocol === 'http:' && !isLoopback(parsed.hostname) ? parsed.host : undefined
}
