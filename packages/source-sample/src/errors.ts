import { SkipprError } from '@skippr/connector-api'

export const SAMPLE_OFFSET_INVALID = 'SKIPPR_SAMPLE_OFFSET_INVALID'

/** The resume offset handed to `read` is not one this source produced. */
export class SampleOffsetError extends SkipprError {
  constructor(offset: unknown) {
    super(
      SAMPLE_OFFSET_INVALID,
      `Sample source: resume offset ${JSON.stringify(offset)} is not { row: <whole number> }: ` +
        'it was written by another source type; reset the pipeline to start over',
    )
  }
}
