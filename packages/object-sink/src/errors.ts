import { SkipprError } from '@skippr/connector-api'

export const OBJECT_CONFLICT = 'SKIPPR_OBJECT_CONFLICT'
export const PARTITION_FIELD_MISSING = 'SKIPPR_PARTITION_FIELD_MISSING'

/**
 * An object exists at a batch's key with other bytes than this batch's: someone else wrote there
 * (a second pipeline of the same name into the same prefix, a hand-made object). It is never
 * replaced, so retrying cannot help.
 */
export class ObjectConflictError extends SkipprError {
  constructor(where: string, found: string | undefined, expected: string) {
    const holds = found === undefined ? 'no skippr checksum' : `sha256 ${found}`
    super(
      OBJECT_CONFLICT,
      `${where} already exists with other contents (${holds}; this batch's object has sha256 ${expected}), ` +
        'and objects are never replaced; another writer uses this prefix for a pipeline of the same name: ' +
        'give each pipeline its own prefix, or remove the object if it is not needed',
    )
  }
}

/** `partition_by` takes values of a field a namespace does not have: no row could say where it goes. */
export class PartitionFieldError extends SkipprError {
  constructor(template: string, namespace: string, field: string, fields: readonly string[]) {
    super(
      PARTITION_FIELD_MISSING,
      `partition_by ${JSON.stringify(template)} takes {field:${field}}, which namespace ${namespace} does not have ` +
        `(its fields: ${fields.join(', ')}); name one of its fields, or remove the placeholder`,
    )
  }
}
