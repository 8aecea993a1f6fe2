import { exactlyOnceSuite, renameColumnSuite } from '@skippr/conformance'
import { sink } from '../src/index.js'
import { duckdbHarness } from './helpers.js'

exactlyOnceSuite(duckdbHarness('main'))
// A configured schema whose name needs quoting, created on first use.
exactlyOnceSuite(duckdbHarness('Raw Data "v1"'))
renameColumnSuite(sink, duckdbHarness('main'))
