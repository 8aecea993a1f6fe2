import { exactlyOnceSuite } from '@skippr/conformance'
import { duckdbHarness } from './helpers.js'

exactlyOnceSuite(duckdbHarness('main'))
// A configured schema whose name needs quoting, created on first use.
exactlyOnceSuite(duckdbHarness('Raw Data "v1"'))
