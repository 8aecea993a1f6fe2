import { objectStoreSuite } from '@skippr/conformance'
import { s3Fixture, s3StoreHarness } from './helpers.js'

objectStoreSuite(s3StoreHarness(s3Fixture()))
