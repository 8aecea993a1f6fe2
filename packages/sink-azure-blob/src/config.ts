/**
 * The `AzureBlob` sink's config: the container, one way to sign in (an account's connection string,
 * or an account URL with a SAS token), and the fields every object destination shares.
 */
import { BlobServiceClient } from '@azure/storage-blob'
import type { FieldProblem } from '@skippr/connector-api'
import { crossFieldCheck } from '@skippr/connector-api'
import { objectSinkFields } from '@skippr/object-sink'
import * as v from 'valibot'

/** Azure's rule: 3 to 63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit. */
const CONTAINER_NAME = /^(?=.{3,63}$)[a-z0-9]+(?:-[a-z0-9]+)*$/

export const azureBlobSinkConfig = v.pipe(
  v.strictObject({
    container: v.pipe(
      v.string(),
      v.regex(
        CONTAINER_NAME,
        'not a container name: Azure allows 3 to 63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit',
      ),
      v.description('The container the blobs are written to; it must exist'),
    ),
    connection_string: v.optional(
      v.pipe(
        v.string(),
        v.check(
          isConnectionString,
          'not an Azure Storage connection string: copy one from the storage account (Access keys, or Shared access signature)',
        ),
        v.description(
          'The storage account connection string (secret), e.g. DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…',
        ),
      ),
    ),
    account_url: v.optional(
      v.pipe(
        v.string(),
        v.url('not a URL: write the account blob endpoint, e.g. https://myaccount.blob.core.windows.net'),
        v.check(
          (url) => new URL(url).search === '' && new URL(url).username === '' && new URL(url).password === '',
          'the account_url holds a query or a user: give the SAS as sas_token instead, so it stays secret',
        ),
        v.description(
          'The blob endpoint of the storage account, e.g. https://myaccount.blob.core.windows.net',
        ),
      ),
    ),
    sas_token: v.optional(
      v.pipe(
        v.string(),
        v.check(
          (token) => /(^|[?&])sig=/.test(token),
          'not a SAS token: it holds no sig= (copy the token, from sv= to the end, from Shared access signature)',
        ),
        v.description('A SAS token for account_url with read, create and write permission (secret)'),
      ),
    ),
    ...objectSinkFields,
  }),
  crossFieldCheck((config) => credentialProblems(config)),
)

export type AzureBlobSinkConfig = v.InferOutput<typeof azureBlobSinkConfig>
/** The config as written, before defaults. */
export type AzureBlobSinkOptions = v.InferInput<typeof azureBlobSinkConfig>

/** How the sink signs its requests: exactly one of the two ways the config allows. */
export type AzureCredentials =
  | { readonly connectionString: string }
  | { readonly accountUrl: string; readonly sasToken: string }

/** The config's credential fields, of which `credentialProblems` lets exactly one way through. */
export interface CredentialFields {
  readonly connection_string?: string | undefined
  readonly account_url?: string | undefined
  readonly sas_token?: string | undefined
}

/** The credentials of a valid config (`credentialProblems` found none). */
export function credentialsOf(config: CredentialFields): AzureCredentials {
  if (config.connection_string !== undefined) return { connectionString: config.connection_string }
  if (config.account_url !== undefined && config.sas_token !== undefined)
    return { accountUrl: config.account_url, sasToken: config.sas_token.replace(/^\?/, '') }
  throw new Error('the AzureBlob config has neither connection_string nor account_url with sas_token')
}

function credentialProblems(config: CredentialFields): FieldProblem[] {
  const byString = config.connection_string !== undefined
  const byUrl = config.account_url !== undefined || config.sas_token !== undefined
  if (byString && byUrl)
    return [
      {
        path: ['connection_string'],
        message: 'give either connection_string, or account_url with sas_token, not both',
      },
    ]
  if (!byString && !byUrl)
    return [
      {
        path: ['connection_string'],
        message: 'missing: give connection_string, or account_url with sas_token',
      },
    ]
  if (!byString && config.sas_token === undefined)
    return [
      {
        path: ['sas_token'],
        message: 'missing: account_url needs a sas_token (or use connection_string instead)',
      },
    ]
  if (!byString && config.account_url === undefined)
    return [
      {
        path: ['account_url'],
        message:
          'missing: sas_token needs the account_url it is for, e.g. https://myaccount.blob.core.windows.net',
      },
    ]
  return []
}

/** Whether the SDK can read the string; it throws for a missing AccountName, AccountKey or endpoint. */
function isConnectionString(text: string): boolean {
  try {
    BlobServiceClient.fromConnectionString(text)
    return true
  } catch {
    return false
  }
}
