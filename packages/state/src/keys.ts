import { InvalidStateNameError } from './errors.js'

/*
 * Key layout. Names are URI-encoded so `/` only ever separates segments and one name's keys
 * can never be a prefix-match for another's.
 *
 *   <ws>/leases/<pipeline>                           lease record (kept by drop: it carries the fencing counter)
 *   <ws>/pipelines/<pipeline>/resume                 resume position + the newest fence that wrote it
 *   <ws>/pipelines/<pipeline>/enabled
 *   <ws>/pipelines/<pipeline>/last-run
 *   <ws>/pipelines/<pipeline>/counters               rows and bytes committed and landed per namespace
 *   <ws>/pipelines/<pipeline>/landing-failures       failed landing attempts of pending batches
 *   <ws>/pipelines/<pipeline>/wal-log                a WAL storage's record beside its log (the S3 WAL's)
 *   <ws>/pipelines/<pipeline>/schema/<ns>/<version>  one immutable key per schema version
 *
 * Every list() is of one pipeline's records, so a partitioned store lists inside one partition
 * (partition.ts).
 */

const VERSION_DIGITS = 10

export function segment(kind: string, name: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new InvalidStateNameError(kind, name)
  return encodeURIComponent(name)
}

export function pipelinesPrefix(workspace: string): string {
  return `${segment('workspace', workspace)}/pipelines/`
}

export class PipelineKeys {
  readonly prefix: string
  readonly lease: string
  readonly resume: string
  readonly enabled: string
  readonly lastRun: string
  readonly schemas: string
  readonly counters: string
  readonly landingFailures: string
  readonly walLog: string

  constructor(workspace: string, pipeline: string) {
    const name = segment('pipeline', pipeline)
    this.prefix = `${pipelinesPrefix(workspace)}${name}/`
    this.lease = `${segment('workspace', workspace)}/leases/${name}`
    this.resume = `${this.prefix}resume`
    this.enabled = `${this.prefix}enabled`
    this.lastRun = `${this.prefix}last-run`
    this.schemas = `${this.prefix}schema/`
    this.counters = `${this.prefix}counters`
    this.landingFailures = `${this.prefix}landing-failures`
    this.walLog = `${this.prefix}wal-log`
  }

  schemaVersions(namespace: string): string {
    return `${this.schemas}${segment('namespace', namespace)}/`
  }

  /** Zero-padded so key order is version order. */
  schema(namespace: string, version: number): string {
    return `${this.schemaVersions(namespace)}${String(version).padStart(VERSION_DIGITS, '0')}`
  }
}

/** Namespace and version of a key made by `PipelineKeys.schema`. */
export function parseSchemaKey(schemasPrefix: string, key: string): { namespace: string; version: number } {
  const [namespace = '', version = ''] = key.slice(schemasPrefix.length).split('/')
  return { namespace: decodeURIComponent(namespace), version: Number(version) }
}
