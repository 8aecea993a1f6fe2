/** Errors of schema management (`metadata`, `SCHEMA DUMP`, `LOAD SCHEMA`, `ALTER TABLE`); match with `hasCode`. */
import { SkipprError } from '@skippr/connector-api'

export const SCHEMA_CHANGE_REFUSED = 'SKIPPR_SCHEMA_CHANGE_REFUSED'
export const SCHEMA_FILE_INVALID = 'SKIPPR_SCHEMA_FILE_INVALID'

/** The change would leave rows that cannot follow it; nothing was saved. */
export class SchemaChangeRefusedError extends SkipprError {
  constructor(namespace: string, why: string) {
    super(
      SCHEMA_CHANGE_REFUSED,
      `schema change of namespace '${namespace}' refused: ${why}; nothing was changed`,
    )
  }
}

/** A schema file (or --schema-json text) that is not `{"fields":[{"name","field_type","nullable"}]}`. */
export class SchemaFileInvalidError extends SkipprError {
  constructor(where: string, problem: string, fix: string) {
    super(SCHEMA_FILE_INVALID, `${where}: ${problem}: ${fix}`)
  }
}
