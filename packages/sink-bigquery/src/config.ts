import * as v from 'valibot'

export const bigquerySinkConfig = v.strictObject({
  project: v.pipe(v.string(), v.minLength(1), v.description('The Google Cloud project the jobs run in')),
  dataset: v.pipe(v.string(), v.minLength(1), v.description('The dataset the tables are created in')),
  location: v.optional(
    v.pipe(v.string(), v.minLength(1), v.description('Where the dataset and the jobs are (e.g. US, EU)')),
    'US',
  ),
  credentials: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description('A service-account key (its JSON text); without it, application default credentials'),
    ),
  ),
  access_token: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description('An OAuth access token used as it is, instead of a key'),
    ),
  ),
  api_endpoint: v.optional(
    v.pipe(v.string(), v.url(), v.description('The REST endpoint (for tests against a local server)')),
  ),
  create_dataset: v.optional(
    v.pipe(v.boolean(), v.description('Create the dataset when it is missing (default true)')),
    true,
  ),
})

export type BigquerySinkConfig = v.InferOutput<typeof bigquerySinkConfig>
/** The config as written, before defaults. */
export type BigquerySinkOptions = v.InferInput<typeof bigquerySinkConfig>
