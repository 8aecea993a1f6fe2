import type { S3ClientConfig } from '@aws-sdk/client-s3'

export interface S3Settings {
  readonly region?: string | undefined
  /** An S3-compatible server, or a region endpoint; else the SDK's (AWS_ENDPOINT_URL_S3 included). */
  readonly endpoint?: string | undefined
  /** Default: path style when the endpoint is an IP address or localhost. */
  readonly forcePathStyle?: boolean | undefined
  /** Default: the SDK's credential chain (AWS_ACCESS_KEY_ID, profiles, instance roles). */
  readonly credentials?:
    | { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string }
    | undefined
}

/** The client configuration for `settings`. */
export function s3ClientConfig(settings: S3Settings): S3ClientConfig {
  const endpoint = settings.endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL
  return {
    ...(settings.region !== undefined && { region: settings.region }),
    ...(settings.endpoint !== undefined && { endpoint: settings.endpoint }),
    forcePathStyle:
      settings.forcePathStyle ?? (endpoint !== undefined && endpoint !== '' && isLocalOrIp(endpoint)),
    ...(settings.credentials && { credentials: settings.credentials }),
    // The checksums the SDK adds by default are refused by some S3-compatible servers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  }
}

/** Virtual-hosted buckets need a DNS name: an IP address or localhost can only be addressed by path. */
export function isLocalOrIp(endpoint: string): boolean {
  const host = new URL(endpoint).hostname
  return host === 'localhost' || /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[')
}
