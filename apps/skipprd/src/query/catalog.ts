/**
 * The pipelines a query session can see: those in skippr.yml, each with its settings and saved
 * state. Pipelines may keep their data in different directories, so a state store is opened per
 * data directory, once, and only when first needed. Opening one never takes a lease: LMDB lets
 * this process read while a sync writes.
 */
import type { Sink, SinkDefinition } from '@skippr/connector-api'
import type { PipelineState, StateStore } from '@skippr/state'
import type { Logger } from 'pino'
import type { ConfigFile } from '../config/load.js'
import {
  type PipelineSettings,
  pipelineNames,
  pipelineSettings,
  type RuntimeFlags,
} from '../config/settings.js'
import { resolveSink, sinkDefinitionOf } from '../connectors.js'
import { connectorLogger } from '../logging.js'
import { openPipelineStore } from '../runner/state-store.js'
import { checkWalStorage } from '../runner/wal-backend.js'
import { duckdbWarehouse, type Warehouse } from './destination.js'

export interface PipelineHandle {
  readonly settings: PipelineSettings
  readonly store: StateStore
  readonly state: PipelineState
}

export class PipelineCatalog {
  private readonly stores = new Map<string, Promise<StateStore>>()
  private readonly warehouses = new Map<string, Promise<Warehouse | undefined>>()

  constructor(
    private readonly file: ConfigFile,
    private readonly flags: RuntimeFlags,
    private readonly cwd: string,
    private readonly logger: Logger,
    /** Registers a connector's secret values for redaction. */
    private readonly onSecrets: (secrets: readonly string[]) => void,
  ) {}

  /** Pipeline names in skippr.yml order. */
  names(): string[] {
    return pipelineNames(this.file)
  }

  /** Settings only (no store opened); `Pipeline '<name>' not found` for a name not in skippr.yml. */
  settings(name: string): PipelineSettings {
    const settings = pipelineSettings(this.file, name, this.flags, this.cwd, false)
    checkWalStorage(settings)
    return settings
  }

  async open(name: string): Promise<PipelineHandle> {
    const settings = this.settings(name)
    const key = `${settings.dataDir}\u0000${settings.store.type}\u0000${settings.workspace}`
    let store = this.stores.get(key)
    if (store === undefined) {
      store = openPipelineStore(settings)
      this.stores.set(key, store)
    }
    const opened = await store
    return { settings, store: opened, state: opened.pipeline(name) }
  }

  /** The pipeline's DuckDB warehouse, read from skippr.yml once; undefined when its data_sink is not DuckDB. */
  warehouse(settings: PipelineSettings): Promise<Warehouse | undefined> {
    let found = this.warehouses.get(settings.name)
    if (found === undefined) {
      found = duckdbWarehouse(this.file, settings, this.onSecrets)
      this.warehouses.set(settings.name, found)
    }
    return found
  }

  /** The pipeline's data sink and its schema sink, each as `data_sinks.<entry>` with its definition (config not read). */
  async tableSinks(
    settings: PipelineSettings,
  ): Promise<{ readonly entry: string; readonly definition: SinkDefinition }[]> {
    const entries: [string, 'data_sinks' | 'schema_sinks'][] = []
    if (settings.sinkEntry !== undefined) entries.push([settings.sinkEntry, 'data_sinks'])
    if (settings.schemaSinkEntry !== undefined) entries.push([settings.schemaSinkEntry, 'schema_sinks'])
    return Promise.all(
      entries.map(async ([entry, section]) => ({
        entry: `${section}.${entry}`,
        definition: await sinkDefinitionOf(this.file, entry, section),
      })),
    )
  }

  /** The pipeline's deadletter sink, opened; undefined when it has none. */
  async openDeadletterSink(settings: PipelineSettings): Promise<Sink | undefined> {
    if (settings.deadletterSinkEntry === undefined) return undefined
    const resolved = await resolveSink(this.file, settings.deadletterSinkEntry, 'deadletter_sinks')
    this.onSecrets(resolved.secrets)
    const logger = this.logger.child({ pipeline: settings.name })
    return resolved.definition.create(resolved.config, {
      configDir: this.file.dir,
      dataDir: settings.dataDir,
      pipeline: settings.name,
      logger: connectorLogger(logger),
    })
  }

  /** Where a statement's effects are logged. */
  get log(): Logger {
    return this.logger
  }

  async close(): Promise<void> {
    const stores = [...this.stores.values()]
    this.stores.clear()
    for (const store of await Promise.allSettled(stores))
      if (store.status === 'fulfilled') await store.value.close()
  }
}
