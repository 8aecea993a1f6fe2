/**
 * The pipeline's schemas, versioned in the state store. A WAL batch part names the schema version
 * its rows were read with, so the lander can hand a sink the exact layout of every part, even
 * for batches committed by an earlier run.
 */
import { evolveSchema, type NamespaceSchema, type SourceChunk } from '@skippr/connector-api'
import type { JsonValue, PipelineState } from '@skippr/state'
import { type AppliedSchema, evolveSaved } from '../schema/applied.js'
import { relayout } from '../schema/relayout.js'

interface Current {
  readonly version: number
  readonly schema: NamespaceSchema
}

export class SchemaRegistry {
  private readonly latest = new Map<string, Current>()
  private readonly versions = new Map<string, NamespaceSchema>()
  private discover: () => Promise<NamespaceSchema[]> = async () => []
  /** The discovery run for namespaces the saved schemas lack, at most once per run. */
  private rediscovery: Promise<void> | undefined

  constructor(
    private readonly state: PipelineState,
    private readonly fence: bigint,
    /** A namespace seen for the first time (discovered, or appearing during the run). */
    private readonly onDiscovered: (schema: NamespaceSchema) => void,
    private readonly onEvolved: (previous: NamespaceSchema, next: NamespaceSchema, version: number) => void,
    /** The pipeline's deadletter namespace, which no source namespace may take. */
    private readonly reserved: string,
  ) {}

  /**
   * Loads the saved schemas; with none saved yet, runs `discover` and saves what it finds. Later,
   * rows of a namespace no saved schema has (a File source whose `namespace:` was renamed, a new
   * table) run `discover` again, once, so a sync never needs a manual `skipprd discover`.
   */
  async load(discover: () => Promise<NamespaceSchema[]>): Promise<void> {
    this.discover = discover
    const saved = await this.state.listSchemas()
    for (const { namespace, version, schema } of saved)
      this.remember(namespace, version, schema as unknown as NamespaceSchema)
    if (saved.length > 0) return
    for (const schema of await discover()) await this.add(schema)
  }

  /** The newest schema of every namespace. */
  current(): NamespaceSchema[] {
    return [...this.latest.values()].map((c) => c.schema)
  }

  /**
   * The schema version a chunk's rows are laid out in, saving a new version when it changed, and
   * the rows in that layout: the source's own, unless a user changed the schema (schema/applied.ts).
   */
  async observe(chunk: SourceChunk): Promise<{ version: number; body: Uint8Array }> {
    const applied = this.latest.get(chunk.namespace)
    const saved = applied?.schema as AppliedSchema | undefined
    if (applied && saved?.sourceFields) {
      const next = chunk.schema ? evolveSaved(saved, chunk.schema) : saved
      const layout = chunk.schema?.fields ?? saved.sourceFields
      if (next === saved)
        return { version: applied.version, body: relayout(saved, chunk.format, layout, chunk.body) }
      const version = await this.save(next)
      this.onEvolved(saved, next, version)
      return { version, body: relayout(next, chunk.format, layout, chunk.body) }
    }
    return { version: await this.observeOwn(chunk), body: chunk.body }
  }

  private async observeOwn(chunk: SourceChunk): Promise<number> {
    let current = this.latest.get(chunk.namespace)
    if (!chunk.schema) {
      if (!current) {
        this.rediscovery ??= this.addUnknown()
        await this.rediscovery
        current = this.latest.get(chunk.namespace)
      }
      if (!current)
        throw new Error(
          `the source sent rows of namespace '${chunk.namespace}' without its schema, and its discovery does not list it`,
        )
      return current.version
    }
    if (!current) return this.add(chunk.schema)
    const next = evolveSchema(current.schema, chunk.schema)
    if (next === current.schema) return current.version
    if (chunk.format === 'csv') checkCsvLayout(chunk.namespace, chunk.schema, next)
    const version = await this.save(next)
    this.onEvolved(current.schema, next, version)
    return version
  }

  /** The schema a batch part was written with. */
  async get(namespace: string, version: number): Promise<NamespaceSchema> {
    const known = this.versions.get(key(namespace, version))
    if (known) return known
    const saved = await this.state.getSchema(namespace, version)
    if (!saved)
      throw new Error(
        `schema version ${version} of namespace '${namespace}' is missing from the state store; the WAL holds rows that need it`,
      )
    const schema = saved.schema as unknown as NamespaceSchema
    this.versions.set(key(namespace, version), schema)
    return schema
  }

  /** Discovers the source again and saves the namespaces not known yet (known ones evolve by their rows). */
  private async addUnknown(): Promise<void> {
    for (const schema of await this.discover()) if (!this.latest.has(schema.namespace)) await this.add(schema)
  }

  private async add(schema: NamespaceSchema): Promise<number> {
    if (schema.namespace === this.reserved)
      throw new Error(
        `the source has a namespace named '${schema.namespace}', the name of this pipeline's deadletters; rename it in the source config (namespace:) or rename the pipeline`,
      )
    const version = await this.save(schema)
    this.onDiscovered(schema)
    return version
  }

  private async save(schema: NamespaceSchema): Promise<number> {
    const version = await this.state.saveSchema(schema.namespace, schema as unknown as JsonValue, {
      fence: this.fence,
    })
    this.remember(schema.namespace, version, schema)
    return version
  }

  private remember(namespace: string, version: number, schema: NamespaceSchema): void {
    this.versions.set(key(namespace, version), schema)
    const current = this.latest.get(namespace)
    if (!current || current.version < version) this.latest.set(namespace, { version, schema })
  }
}

function key(namespace: string, version: number): string {
  return `${namespace}\u0000${version}`
}

/** CSV columns are positional: the rows must be laid out exactly as the schema version that describes them. */
function checkCsvLayout(namespace: string, observed: NamespaceSchema, next: NamespaceSchema): void {
  const names = (s: NamespaceSchema) => s.fields.map((f) => f.name).join(',')
  if (names(observed) !== names(next))
    throw new Error(
      `the source changed the columns of '${namespace}' from [${names(next)}] to [${names(observed)}]; CSV rows can only gain columns at the end`,
    )
}
