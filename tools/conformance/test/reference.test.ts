import { atLeastOnceSuite, exactlyOnceSuite, overwriteOnRetrySuite } from '../src/index.js'
import { referenceHarness } from './reference-sink.js'

exactlyOnceSuite(referenceHarness('none'))
overwriteOnRetrySuite(referenceHarness('none'))
atLeastOnceSuite(referenceHarness('none', 'at-least-once'))
