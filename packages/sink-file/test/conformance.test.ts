import { overwriteOnRetrySuite } from '@skippr/conformance'
import { fileHarness } from './helpers.js'

overwriteOnRetrySuite(fileHarness('jsonl'))
overwriteOnRetrySuite(fileHarness('csv'))
overwriteOnRetrySuite(fileHarness('parquet'))
overwriteOnRetrySuite(fileHarness('jsonl', 'gzip'))
overwriteOnRetrySuite(fileHarness('csv', 'zstd'))
