/**
 * `skipprd discover`: reads the source's namespaces and schemas and saves them. Output `json`
 * emits `discover_start`, `namespace_discovered`, `schema_evolved`, `discover_complete`.
 */
import { pipelineNames } from '../config/settings.js'
import { timestamp } from '../output/json.js'
import { type DiscoverEvent, discoverPipeline } from '../runner/discover.js'
import { resolvePipeline } from '../runner/session.js'
import { EXIT_OK, type GlobalOptions, runCommand } from './common.js'

export function discover(options: GlobalOptions): Promise<number> {
  return runCommand('discover', options, async (context) => {
    const show = options.output === 'json' ? jsonLine : textLine
    const name = options.pipeline ?? (context.file.env.PIPELINE_NAME || undefined)
    for (const pipelineName of name === undefined ? pipelineNames(context.file) : [name]) {
      const pipeline = await resolvePipeline(context, pipelineName, true)
      await discoverPipeline({
        pipeline,
        configDir: context.file.dir,
        logger: context.logger,
        listener: (event) => {
          const line = show(event)
          if (line !== undefined) context.out(`${line}\n`)
        },
      })
    }
    return EXIT_OK
  })
}

function textLine(event: DiscoverEvent): string | undefined {
  switch (event.type) {
    case 'discover_start':
      return `Discover started: pipeline=${event.pipeline}`
    case 'namespace_discovered':
      return `Namespace discovered: ${event.namespace} fields=${event.fieldCount}`
    case 'schema_evolved':
      return `Schema evolved: ${event.namespace} fields_added=${event.fieldsAdded}`
    case 'discover_complete':
      return `Discover complete: pipeline=${event.pipeline} namespaces=${event.namespaces} fields=${event.totalFields} elapsed=${event.elapsedMs}ms`
  }
}

function jsonLine(event: DiscoverEvent): string {
  const fields = (() => {
    switch (event.type) {
      case 'discover_start':
        return { phase: 'start' }
      case 'namespace_discovered':
        return { phase: 'discover', namespace: event.namespace, field_count: event.fieldCount }
      case 'schema_evolved':
        return { phase: 'discover', namespace: event.namespace, fields_added: event.fieldsAdded }
      case 'discover_complete':
        return {
          phase: 'complete',
          ok: true,
          namespaces_discovered: event.namespaces,
          total_fields: event.totalFields,
          elapsed_ms: event.elapsedMs,
        }
    }
  })()
  const { phase, ...rest } = fields
  return JSON.stringify({
    event: event.type,
    phase,
    pipeline: event.pipeline,
    ...rest,
    timestamp: timestamp(new Date()),
    run_id: event.runId,
  })
}
