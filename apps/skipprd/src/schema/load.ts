/**
 * A schema file turned into the changes it asks for: its field list replaces the namespace's
 * (`metadata apply`, `LOAD SCHEMA`). A one-namespace file goes to the namespace named beside it;
 * a pipeline's file (as `SCHEMA DUMP p` writes it) to each namespace it lists, or to the one named.
 */
import { readFile } from 'node:fs/promises'
import type { SchemaChange } from './changes.js'
import { SchemaFileInvalidError } from './errors.js'
import { parseSchemaFile } from './file.js'

/** The changes `text` (read from `where`) asks for, for `namespace` or for every one it lists. */
export function schemaFileChanges(
  text: string,
  where: string,
  namespace: string | undefined,
): Map<string, SchemaChange> {
  const file = parseSchemaFile(text, where)
  if (file.kind === 'namespace') {
    if (namespace === undefined)
      throw new SchemaFileInvalidError(
        where,
        'it holds one namespace\'s fields ("fields") but no namespace is named',
        'name it: INTO <pipeline>.<namespace> (metadata apply: --namespace <namespace>)',
      )
    return new Map([[namespace, { kind: 'replace', fields: file.fields }]])
  }
  const chosen = namespace === undefined ? [...file.namespaces.keys()] : [namespace]
  return new Map(
    chosen.map((ns) => {
      const fields = file.namespaces.get(ns)
      if (!fields)
        throw new SchemaFileInvalidError(
          where,
          `it has no namespace '${ns}' (it has: ${[...file.namespaces.keys()].join(', ') || 'none'})`,
          'name one it has, or add it under "namespaces"',
        )
      return [ns, { kind: 'replace', fields }]
    }),
  )
}

/** A schema file's text; one line naming the file when it cannot be read. */
export async function readSchemaFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    throw new SchemaFileInvalidError(
      path,
      `cannot be read (${code})`,
      'check the path (relative paths start where skipprd runs)',
    )
  }
}
