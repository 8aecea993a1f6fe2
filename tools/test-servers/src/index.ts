export { type Clickhouse, type ClickhouseOptions, startClickhouse } from './clickhouse.js'
export { startZookeeper, type Zookeeper } from './zookeeper.js'
