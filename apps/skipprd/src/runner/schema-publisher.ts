/**
 * The data sink's schema sink (`schema_sink: schema_sinks.<name>` beside its type key): every schema
 * the data sink prepares is prepared on the schema sink first, so the schema sink's tables are
 * created and evolved from the saved schema before data lands. That is the saved schemas when the
 * data sink opens, at the start of each sync (a user's `metadata apply` or `ALTER TABLE` since the
 * last one included), and each new version the source brings before the first batch that has it
 * lands.
 *
 * A failure there is the data sink's prepare failing: retried as a landing is, unless the schema
 * sink marked it permanent; either way the landing's error names the schema sink. A pipeline
 * whose source has no rows still brings the schema sink up to date when its data sink opens, but
 * a failure then is only met by the next batch.
 */
import {
  type ConnectorContext,
  isPermanent,
  type NamespaceSchema,
  permanent,
  type Sink,
  type SinkDefinition,
} from '@skippr/connector-api'
import type { Logger } from 'pino'
import type { ResolvedConnector } from '../connectors.js'
import { SchemaSinkError } from '../errors.js'
import { SinkHandle } from './sink-handle.js'

export class SchemaPublisher {
  private readonly handle: SinkHandle

  constructor(
    private readonly schemaSink: ResolvedConnector<SinkDefinition>,
    context: ConnectorContext,
    private readonly logger: Logger,
  ) {
    const { definition, config } = schemaSink
    this.handle = new SinkHandle(
      async () => definition.create(config, context),
      () => [],
      logger,
    )
  }

  /** `openDataSink`, with a `prepare` that publishes each schema to the schema sink first. */
  ahead(openDataSink: () => Promise<Sink>): () => Promise<Sink> {
    return async () => {
      const sink = await openDataSink()
      return {
        guarantee: sink.guarantee,
        ...(sink.concurrentWrites !== undefined && { concurrentWrites: sink.concurrentWrites }),
        prepare: async (schema) => {
          await this.publish(schema)
          await sink.prepare(schema)
        },
        write: (batch) => sink.write(batch),
        close: () => sink.close(),
      }
    }
  }

  async close(): Promise<void> {
    await this.handle.close()
  }

  private async publish(schema: NamespaceSchema): Promise<void> {
    const { entry, type } = this.schemaSink
    try {
      await this.handle.ready(schema)
    } catch (error) {
      const failure = new SchemaSinkError(entry, type, schema.namespace, error)
      throw isPermanent(error) ? permanent(failure) : failure
    }
    this.logger.debug(
      { namespace: schema.namespace, field_count: schema.fields.length, schema_sink: entry },
      'schema published to the schema sink',
    )
  }
}
