/** The SDK client for the sink's config: a service-account key, a fixed access token, or ADC. */
import { BigQuery } from '@google-cloud/bigquery'
import { ConfigError } from '@skippr/connector-api'
import type { BigquerySinkConfig } from './config.js'

export function createClient(config: BigquerySinkConfig): BigQuery {
  const base = {
    // One attempt per request: the runner's retry loop owns the retrying, within skipprd's retry
    // budget (the SDK's own, 3 retries with backoff, outlasts a short budget). A resent load meets
    // its job (409) and a resent script the ledger, whoever resends them.
    retryOptions: { autoRetry: false, maxRetries: 0 },
    projectId: config.project,
    location: config.location,
    ...(config.api_endpoint ? { apiEndpoint: config.api_endpoint.replace(/\/+$/, '') } : {}),
  }
  if (config.access_token !== undefined)
    return new BigQuery({ ...base, authClient: fixedToken(config.access_token) })
  if (config.credentials !== undefined)
    return new BigQuery({ ...base, credentials: serviceAccount(config.credentials) })
  return new BigQuery(base)
}

/** An auth client that always sends `token` (the SDK asks it for request headers). */
function fixedToken(token: string) {
  const headers = { Authorization: `Bearer ${token}` }
  return {
    getAccessToken: async () => ({ token }),
    getRequestHeaders: async () => headers,
    // biome-ignore lint/suspicious/noExplicitAny: the SDK types this as google-auth-library's AuthClient
  } as any
}

function serviceAccount(text: string): { client_email: string; private_key: string } {
  let key: { client_email?: unknown; private_key?: unknown }
  try {
    key = JSON.parse(text) as typeof key
  } catch {
    throw new ConfigError("Bigquery credentials: not JSON; give the service-account key file's text")
  }
  if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string')
    throw new ConfigError(
      'Bigquery credentials: the key has no client_email or private_key; give a service-account key',
    )
  return { client_email: key.client_email, private_key: key.private_key }
}
