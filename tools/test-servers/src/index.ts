export { type AzuriteServer, startAzurite } from './azurite.js'
export { type FakeBigquery, type FakeBigqueryOptions, startFakeBigquery } from './bigquery.js'
export { type Clickhouse, type ClickhouseOptions, startClickhouse } from './clickhouse.js'
export {
  type ConditionalS3,
  type ConditionalS3Options,
  type StoredObject,
  startConditionalS3,
} from './conditional-s3.js'
export { type DynaliteServer, startDynalite } from './dynalite.js'
export { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.js'
export { freePorts } from './ports.js'
export { countsSince } from './request-counts.js'
export { type S3Server, startS3rver } from './s3rver.js'
export { type FakeSnowflake, type FakeSnowflakeOptions, startFakeSnowflake } from './snowflake.js'
export { type SshServer, startSshd } from './sshd.js'
export { startZookeeper, type Zookeeper } from './zookeeper.js'
