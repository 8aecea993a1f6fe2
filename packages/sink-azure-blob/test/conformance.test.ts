import { overwriteOnRetrySuite } from '@skippr/conformance'
import { azureFixture, sinkHarness } from './helpers.js'

overwriteOnRetrySuite(sinkHarness(azureFixture(), { format: 'jsonl', compression: 'none' }))
overwriteOnRetrySuite(sinkHarness(azureFixture(), { format: 'csv', compression: 'gzip' }))
overwriteOnRetrySuite(sinkHarness(azureFixture(), { format: 'parquet', compression: 'zstd' }))
