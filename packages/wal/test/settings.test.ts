import { describe, expect, it } from 'vitest'
import { resolveWalSettings } from '../src/settings.js'

const MiB = 1024 * 1024

describe('resolveWalSettings', () => {
  it('uses the documented defaults', () => {
    expect(resolveWalSettings({ env: {} })).toEqual({
      bufferThresholdBytes: 10_485_760,
      bufferThresholdSeconds: 60,
      bytesPerFile: 12.5 * MiB,
      maxDelaySeconds: 60,
      maxTotalBytes: 10 * 1024 * MiB,
    })
  })

  it('takes the environment over the defaults', () => {
    const env = {
      BUFFER_THRESHOLD_BYTES: '2000000',
      BUFFER_THRESHOLD_SECONDS: '2.5',
      WAL_BYTES_PER_FILE: '131072',
      WAL_MAX_DELAY_SECONDS: '5',
      WAL_MAX_TOTAL_BYTES: '1048576',
    }
    expect(resolveWalSettings({ env })).toEqual({
      bufferThresholdBytes: 2_000_000,
      bufferThresholdSeconds: 2.5,
      bytesPerFile: 131_072,
      maxDelaySeconds: 5,
      maxTotalBytes: MiB,
    })
  })

  it('takes the pipeline YAML over the environment', () => {
    const env = {
      BUFFER_THRESHOLD_BYTES: '2000000',
      BUFFER_THRESHOLD_SECONDS: '30',
      WAL_MAX_TOTAL_BYTES: String(1024 * MiB),
    }
    const yaml = {
      buffer_threshold_bytes: 50 * MiB,
      buffer_threshold_seconds: '5',
      wal_max_total_bytes: 200 * MiB,
    }
    expect(resolveWalSettings({ yaml, env })).toMatchObject({
      bufferThresholdBytes: 50 * MiB,
      bufferThresholdSeconds: 5,
      maxTotalBytes: 200 * MiB,
    })
    expect(resolveWalSettings({ yaml: { buffer_threshold_seconds: 7 }, env })).toMatchObject({
      bufferThresholdBytes: 2_000_000,
      bufferThresholdSeconds: 7,
    })
  })

  it('derives WAL_BYTES_PER_FILE from the byte threshold (+25%), clamped to 4–64 MiB, unless set', () => {
    const perFile = (env: Record<string, string>, yaml = {}) => resolveWalSettings({ env, yaml }).bytesPerFile
    expect(perFile({ BUFFER_THRESHOLD_BYTES: String(MiB) })).toBe(4 * MiB)
    expect(perFile({ BUFFER_THRESHOLD_BYTES: String(20 * MiB) })).toBe(25 * MiB)
    expect(perFile({ BUFFER_THRESHOLD_BYTES: '1000001' })).toBe(4 * MiB)
    expect(perFile({ BUFFER_THRESHOLD_BYTES: String(40 * MiB + 1) })).toBe(50 * MiB + 2)
    expect(perFile({}, { buffer_threshold_bytes: 500 * MiB })).toBe(64 * MiB)
    expect(perFile({ BUFFER_THRESHOLD_BYTES: String(500 * MiB), WAL_BYTES_PER_FILE: String(MiB) })).toBe(MiB)
  })

  it('treats an empty variable as unset', () => {
    expect(resolveWalSettings({ env: { BUFFER_THRESHOLD_BYTES: '' } })).toMatchObject({
      bufferThresholdBytes: 10_485_760,
    })
  })

  it('leaves WAL_STORAGE to the caller, which picks the backend type from it', () => {
    expect(resolveWalSettings({ env: { WAL_STORAGE: 'tape' } })).toEqual(resolveWalSettings({ env: {} }))
  })

  it('fails with one line naming the variable or key for a bad value', () => {
    const cases: Array<[Parameters<typeof resolveWalSettings>[0], string]> = [
      [
        { env: { BUFFER_THRESHOLD_BYTES: 'ten' } },
        "BUFFER_THRESHOLD_BYTES must be a whole number of bytes from 1 to 4294967295, got 'ten'",
      ],
      [{ env: { BUFFER_THRESHOLD_BYTES: '0' } }, 'BUFFER_THRESHOLD_BYTES must be'],
      [{ env: { BUFFER_THRESHOLD_BYTES: '1.5' } }, 'BUFFER_THRESHOLD_BYTES must be'],
      [
        { env: { BUFFER_THRESHOLD_SECONDS: '-1' } },
        "BUFFER_THRESHOLD_SECONDS must be a positive number of seconds, got '-1'",
      ],
      [
        { env: { WAL_BYTES_PER_FILE: '1000' } },
        'WAL_BYTES_PER_FILE must be a whole number of bytes from 65536',
      ],
      [{ env: { WAL_MAX_DELAY_SECONDS: '0' } }, 'WAL_MAX_DELAY_SECONDS must be a positive number'],
      [
        { env: { WAL_BYTES_PER_FILE: '1048576', WAL_MAX_TOTAL_BYTES: '1048576' } },
        "WAL_MAX_TOTAL_BYTES must be a whole number of bytes from 2097152 (at least two WAL files of WAL_BYTES_PER_FILE) to 9007199254740991, got '1048576'",
      ],
      [
        { env: {}, yaml: { wal_max_total_bytes: '10G' } },
        'wal_max_total_bytes must be a whole number of bytes from 26214400 (at least two WAL files',
      ],
      [
        { env: {}, yaml: { buffer_threshold_bytes: 'lots' } },
        "buffer_threshold_bytes must be a whole number of bytes from 1 to 4294967295, got 'lots'",
      ],
      [
        { env: {}, yaml: { buffer_threshold_seconds: true } },
        'buffer_threshold_seconds must be a positive number',
      ],
    ]
    for (const [input, message] of cases) {
      let error: unknown
      try {
        resolveWalSettings(input)
      } catch (e) {
        error = e
      }
      expect(error).toMatchObject({ code: 'WAL_CONFIG_INVALID', message: expect.stringContaining(message) })
      expect((error as Error).message).not.toContain('\n')
    }
  })
})
