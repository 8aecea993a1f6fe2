/**
 * `skipprd metadata show|apply -p <pipeline>`: a pipeline's saved schemas in the vendor's shape
 * (schema/file.ts), and a namespace's field list replaced from a file, stdin (`--schema -`) or
 * `--schema-json`, saved as its next version (schema/apply.ts, as `LOAD SCHEMA` does).
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import { PipelineCatalog } from '../query/catalog.js'
import { NamespaceNotFoundError } from '../query/errors.js'
import { neverRanHere } from '../runner/state-store.js'
import { applySchemaChanges, describeApplied } from '../schema/apply.js'
import { namespaceDocument, pipelineDocument } from '../schema/file.js'
import { readSchemaFile, schemaFileChanges } from '../schema/load.js'
import { type CommandContext, EXIT_OK, EXIT_USAGE, type GlobalOptions, runCommand } from './common.js'

export interface MetadataOptions extends GlobalOptions {
  readonly namespace?: string
  readonly schema?: string
  readonly schemaJson?: string
}

export function metadataShow(options: MetadataOptions): Promise<number> {
  return withPipeline('metadata show', options, async (context, catalog, name) => {
    // A pipeline that never ran here has no saved schema, and showing that creates nothing.
    const schemas = neverRanHere(catalog.settings(name))
      ? []
      : (await (await catalog.open(name)).state.listSchemas()).map(
          (s) => s.schema as unknown as NamespaceSchema,
        )
    if (options.namespace === undefined) {
      context.out(`${JSON.stringify(pipelineDocument(schemas))}\n`)
      return EXIT_OK
    }
    const schema = schemas.find((s) => s.namespace === options.namespace)
    if (!schema)
      throw new NamespaceNotFoundError(
        name,
        options.namespace,
        schemas.map((s) => s.namespace),
      )
    context.out(`${JSON.stringify(namespaceDocument(schema))}\n`)
    return EXIT_OK
  })
}

export function metadataApply(options: MetadataOptions): Promise<number> {
  return withPipeline('metadata apply', options, async (context, catalog, name) => {
    const given = [options.schema, options.schemaJson].filter((v) => v !== undefined).length
    if (options.namespace === undefined || given !== 1) {
      context.err(
        '[skippr] metadata apply needs --namespace <ns> and one of --schema <file|-> or --schema-json <json>\n',
      )
      return EXIT_USAGE
    }
    const [text, where] =
      options.schemaJson !== undefined
        ? [options.schemaJson, '--schema-json']
        : options.schema === '-'
          ? [await readStdin(), 'the schema on stdin (--schema -)']
          : [await readSchemaFile(options.schema as string), options.schema as string]
    const changes = schemaFileChanges(text, where, options.namespace)
    const applied = await applySchemaChanges(await catalog.open(name), changes, 'metadata apply')
    context.out(`${describeApplied(name, applied)}\n`)
    return EXIT_OK
  })
}

/** Runs `work` for the pipeline of -p (or PIPELINE_NAME) with a catalog that is closed after it. */
function withPipeline(
  stage: string,
  options: MetadataOptions,
  work: (context: CommandContext, catalog: PipelineCatalog, pipeline: string) => Promise<number>,
): Promise<number> {
  return runCommand(stage, options, async (context) => {
    const name = options.pipeline ?? (context.file.env.PIPELINE_NAME || undefined)
    if (name === undefined) {
      context.err(`[skippr] ${stage} needs a pipeline: pass -p <pipeline> (or set PIPELINE_NAME)\n`)
      return EXIT_USAGE
    }
    const catalog = new PipelineCatalog(context.file, context.flags, context.cwd, context.logger, (secrets) =>
      context.redactor.add(secrets),
    )
    try {
      return await work(context, catalog, name)
    } finally {
      await catalog.close()
    }
  })
}

async function readStdin(): Promise<string> {
  let text = ''
  process.stdin.setEncoding('utf8')
  for await (const chunk of process.stdin) text += chunk as string
  return text
}
