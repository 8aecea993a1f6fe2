import { overwriteOnRetrySuite } from '@skippr/conformance'
import { s3Fixture, s3SinkHarness } from './helpers.js'

overwriteOnRetrySuite(s3SinkHarness(s3Fixture(), { format: 'jsonl', compression: 'none' }))
overwriteOnRetrySuite(s3SinkHarness(s3Fixture(), { format: 'csv', compression: 'gzip' }))
overwriteOnRetrySuite(s3SinkHarness(s3Fixture(), { format: 'parquet', compression: 'zstd' }))
