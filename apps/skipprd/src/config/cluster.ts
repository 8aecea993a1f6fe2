/**
 * `WAL_STORAGE=clustered`: this node's place among the sync nodes that keep each other's WAL copies.
 *
 *   SKIPPR_CLUSTER_LISTEN   host:port this node's peer server binds (the others list it)
 *   SKIPPR_CLUSTER_PEERS    the other nodes, comma-separated: host:port, or nodeId=host:port for a
 *                           node that sets SKIPPR_CLUSTER_NODE_ID
 *   SKIPPR_CLUSTER_NODE_ID  this node's name in the in-sync set (default: its LISTEN host:port)
 *   SKIPPR_CLUSTER_SECRET   the bearer token every node's peer server expects (a secret)
 *
 * A node is named the same everywhere: by its LISTEN address unless it sets a node id, which is why
 * a plain host:port peer is named by that address.
 */
import { ConfigError } from '@skippr/connector-api'
import type { Env } from './interpolate.js'

export interface ClusterAddress {
  readonly host: string
  readonly port: number
}

export interface ClusterSettings {
  readonly listen: ClusterAddress
  readonly nodeId: string
  readonly peers: readonly { readonly nodeId: string; readonly url: string }[]
  readonly secret: string
}

/** The cluster settings from the environment; anything missing or malformed is one line. */
export function clusterSettings(env: Env): ClusterSettings {
  const listen = address(
    'SKIPPR_CLUSTER_LISTEN',
    required(env, 'SKIPPR_CLUSTER_LISTEN', 'host:port this node’s peer server binds'),
  )
  const nodeId = env.SKIPPR_CLUSTER_NODE_ID?.trim() || `${listen.host}:${listen.port}`
  const peers = required(
    env,
    'SKIPPR_CLUSTER_PEERS',
    'the other nodes, host:port or nodeId=host:port, comma-separated',
  )
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => peer(entry))
  if (peers.length === 0) throw new ConfigError('SKIPPR_CLUSTER_PEERS lists no node: list the other nodes')
  if (peers.some((p) => p.nodeId === nodeId))
    throw new ConfigError(`SKIPPR_CLUSTER_PEERS lists this node (${nodeId}): list only the others`)
  const secret = required(env, 'SKIPPR_CLUSTER_SECRET', 'the bearer token every node’s peer server expects')
  return { listen, nodeId, peers, secret }
}

function required(env: Env, name: string, what: string): string {
  const value = env[name]?.trim()
  if (!value) throw new ConfigError(`WAL_STORAGE=clustered needs ${name}: ${what}`)
  return value
}

function peer(entry: string): { nodeId: string; url: string } {
  const at = entry.indexOf('=')
  const where = address('SKIPPR_CLUSTER_PEERS', at < 0 ? entry : entry.slice(at + 1))
  const nodeId = at < 0 ? `${where.host}:${where.port}` : entry.slice(0, at).trim()
  if (nodeId === '') throw new ConfigError(`SKIPPR_CLUSTER_PEERS: ${entry}: the node id before = is empty`)
  return { nodeId, url: `ws://${where.host.includes(':') ? `[${where.host}]` : where.host}:${where.port}` }
}

function address(name: string, value: string): ClusterAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim())
  const port = Number(match?.[3])
  if (match === null || port < 1 || port > 65_535)
    throw new ConfigError(`${name}: ${value} is not host:port (a port from 1 to 65535)`)
  return { host: match[1] ?? match[2] ?? '', port }
}
