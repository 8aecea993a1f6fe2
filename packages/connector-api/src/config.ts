import { type BaseIssue, type IssuePathItem, type RawCheckAction, rawCheck } from 'valibot'
import type { ConnectorDefinition } from './connector.js'
import { ConfigError } from './errors.js'

/**
 * A connector's config schema: the Standard Schema interface (https://standardschema.dev), which
 * valibot, zod and others implement, so a connector is free in its choice of validator.
 */
export interface ConfigSchema<Config> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => ValidationResult<Config> | Promise<ValidationResult<Config>>
  }
}

type ValidationResult<Config> =
  | { readonly value: Config; readonly issues?: undefined }
  | { readonly issues: readonly ConfigIssue[] }

/** A Standard Schema issue; valibot's carry more (kind, type, expected, …), used when present. */
export interface ConfigIssue {
  readonly message: string
  readonly path?: readonly (PropertyKey | { readonly key: unknown })[] | undefined
}

/** Where a value sits, for error messages: the file and the dotted path inside it. */
export interface ConfigLocation {
  readonly file: string
  readonly path: string
}

/**
 * Validates a connector's raw config with its own schema. The first problem becomes a one-line
 * `ConfigError`: `skippr.yml: data_sinks.warehouse.Duckdb.path: expected string, received number`.
 */
export function parseConnectorConfig<C>(
  definition: ConnectorDefinition<C>,
  raw: unknown,
  at: ConfigLocation,
): C {
  const result = definition.config['~standard'].validate(raw ?? {})
  if (result instanceof Promise)
    throw new ConfigError(
      `${at.file}: ${at.path}: the connector's config schema is asynchronous, which is not supported`,
    )
  if (!result.issues) return result.value
  const { path, message } = configProblem(result.issues[0])
  throw new ConfigError(`${at.file}: ${[at.path, ...path].join('.')}: ${message}`)
}

/** A validation issue as a path and one phrase, with the fix where there is one. */
export interface ConfigProblem {
  /** Keys from the validated value down to the value at fault. */
  readonly path: readonly string[]
  readonly message: string
  /** Set when a strict object met a key it does not know (for a "did you mean" hint). */
  readonly unknownKey?: string
}

/**
 * The problem a valibot issue describes, worded for a config file. Within a union, the alternative
 * whose problem lies deepest is the one the value was meant to match.
 */
export function configProblem(given: ConfigIssue | undefined): ConfigProblem {
  if (!given) return { path: [], message: 'invalid value' }
  const path = (given.path ?? []).map((item) => String(typeof item === 'object' ? item.key : item))
  if (!('kind' in given)) return { path, message: given.message }
  const issue = given as BaseIssue<unknown>
  const nested = issue.type === 'union' ? deepest(issue.issues) : undefined
  if (nested) {
    // A union's issues have paths from the union's own value.
    const inner = configProblem(nested)
    return { ...inner, path: [...path, ...inner.path] }
  }
  if (issue.type === 'strict_object' && issue.expected === 'never') {
    const key = path.at(-1) ?? ''
    return {
      path: path.slice(0, -1),
      message: `unknown key ${key}: remove it or check its spelling`,
      unknownKey: key,
    }
  }
  if (issue.kind === 'schema' && issue.input === undefined && issue.expected === `"${path.at(-1)}"`)
    return { path, message: 'missing: add it' }
  return { path, message: phrase(issue) }
}

/** valibot's "Invalid type: Expected string but received 3", as "expected string, received number". */
function phrase(issue: BaseIssue<unknown>): string {
  const expected = issue.expected?.replace(/^\((.*)\)$/, '$1')
  if (issue.kind === 'schema' && expected !== undefined) {
    // For a choice of values, the value given; for a type, the type given.
    const valued = ['picklist', 'literal', 'enum'].includes(issue.type)
    return `expected ${expected}, received ${valued ? issue.received : kindOf(issue.input)}`
  }
  if (issue.type === 'integer') return `expected an integer, received ${issue.received}`
  if (issue.type === 'min_length' || issue.type === 'max_length')
    return `expected length ${expected}, received ${issue.received}`
  // valibot's own wording starts "Invalid <what>: Expected …"; a schema's own message is kept as written.
  const own = /^Invalid \w+: E(.*)$/.exec(issue.message)
  return own ? `e${own[1]!.replace(' but received ', ', received ')}` : issue.message
}

/** The issue with the longest path, if any has one: a problem inside the value, not with its type. */
function deepest(issues: readonly BaseIssue<unknown>[] | undefined): BaseIssue<unknown> | undefined {
  let best: BaseIssue<unknown> | undefined
  for (const issue of issues ?? []) if ((issue.path?.length ?? 0) > (best?.path?.length ?? 0)) best = issue
  return best
}

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/** A problem `crossFieldCheck` found: where in the config, and what to do about it. */
export interface FieldProblem {
  readonly path: readonly (string | number)[]
  readonly message: string
}

/**
 * A check across fields of an already well-typed config (valibot's `rawCheck`), each problem
 * reported at the path of the field to fix, e.g. `['schema', 2, 'name']`.
 */
export function crossFieldCheck<T>(find: (config: T) => readonly FieldProblem[]): RawCheckAction<T> {
  return rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    for (const { path, message } of find(dataset.value)) {
      const [first, ...rest] = pathItems(dataset.value, path)
      addIssue({ message, ...(first && { path: [first, ...rest] }) })
    }
  })
}

function pathItems(root: unknown, keys: readonly (string | number)[]): IssuePathItem[] {
  const items: IssuePathItem[] = []
  let input = root as Record<string | number, unknown>
  for (const key of keys) {
    const value = input?.[key]
    items.push(
      Array.isArray(input)
        ? { type: 'array', origin: 'value', input, key: key as number, value }
        : { type: 'object', origin: 'value', input, key: String(key), value },
    )
    input = value as Record<string | number, unknown>
  }
  return items
}
