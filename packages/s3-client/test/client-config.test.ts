import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  isCredentialsRefused,
  isLocalOrIp,
  isTransientStatus,
  messageOf,
  s3ClientConfig,
} from '../src/index.js'

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('s3ClientConfig', () => {
  it('addresses an IP or localhost endpoint by path, a DNS name virtual-hosted', () => {
    vi.stubEnv('AWS_ENDPOINT_URL_S3', undefined)
    vi.stubEnv('AWS_ENDPOINT_URL', undefined)
    expect(s3ClientConfig({ endpoint: 'http://127.0.0.1:9000' }).forcePathStyle).toBe(true)
    expect(s3ClientConfig({ endpoint: 'http://localhost:9000' }).forcePathStyle).toBe(true)
    expect(s3ClientConfig({ endpoint: 'http://[::1]:9000' }).forcePathStyle).toBe(true)
    expect(s3ClientConfig({ endpoint: 'https://s3.eu-west-1.amazonaws.com' }).forcePathStyle).toBe(false)
    expect(s3ClientConfig({}).forcePathStyle).toBe(false)
    expect(s3ClientConfig({ endpoint: 'http://127.0.0.1:9000', forcePathStyle: false }).forcePathStyle).toBe(
      false,
    )
  })

  it('decides path style from AWS_ENDPOINT_URL_S3 when the endpoint comes from the environment', () => {
    vi.stubEnv('AWS_ENDPOINT_URL_S3', 'http://127.0.0.1:4569')
    const config = s3ClientConfig({})
    expect(config.forcePathStyle).toBe(true)
    // The SDK reads the variable itself: it is not copied into the config.
    expect(config.endpoint).toBeUndefined()
  })

  it('sends checksums only where the API requires them, and passes credentials through', () => {
    const credentials = { accessKeyId: 'id', secretAccessKey: 'secret' }
    const config = s3ClientConfig({ region: 'eu-west-1', credentials })
    expect(config).toMatchObject({
      region: 'eu-west-1',
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
  })
})

describe('service errors', () => {
  const error = (name: string, status?: number, message = name) =>
    Object.assign(new Error(message), {
      name,
      ...(status !== undefined && { $metadata: { httpStatusCode: status } }),
    })

  it('tells transient statuses from requests the service will refuse again', () => {
    expect(isTransientStatus(error('TypeError'))).toBe(true)
    expect(isTransientStatus(error('InternalError', 500))).toBe(true)
    expect(isTransientStatus(error('SlowDown', 503))).toBe(true)
    expect(isTransientStatus(error('TooManyRequests', 429))).toBe(true)
    expect(isTransientStatus(error('ConditionalRequestConflict', 409))).toBe(true)
    expect(isTransientStatus(error('BucketAlreadyOwnedByYou', 409))).toBe(false)
    expect(isTransientStatus(error('AccessDenied', 403))).toBe(false)
    expect(isTransientStatus(error('NoSuchBucket', 404))).toBe(false)
  })

  it('names refused credentials, and says a bare HEAD failure by its status', () => {
    expect(isCredentialsRefused(error('InvalidAccessKeyId', 403))).toBe(true)
    expect(isCredentialsRefused(error('AccessDenied', 403))).toBe(false)
    expect(messageOf(error('UnknownError', 404, 'UnknownError'))).toBe('HTTP 404')
    expect(messageOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      'connect ECONNREFUSED',
    )
    expect(isLocalOrIp('http://10.0.0.5:9000')).toBe(true)
  })
})
