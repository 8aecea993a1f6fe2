/** SKIPPR_CLUSTER_*: how a node and its peers are named, and each malformed setting as one line. */
import { expect, it } from 'vitest'
import { clusterSettings } from '../src/config/cluster.js'

const NODE = {
  SKIPPR_CLUSTER_LISTEN: '10.0.0.1:7401',
  SKIPPR_CLUSTER_PEERS: '10.0.0.2:7401, c=[fd00::3]:7401',
  SKIPPR_CLUSTER_SECRET: 'secret',
}

it('names a node by its LISTEN address unless it sets an id, and a plain peer by its address', () => {
  expect(clusterSettings(NODE)).toEqual({
    listen: { host: '10.0.0.1', port: 7401 },
    nodeId: '10.0.0.1:7401',
    peers: [
      { nodeId: '10.0.0.2:7401', url: 'ws://10.0.0.2:7401' },
      { nodeId: 'c', url: 'ws://[fd00::3]:7401' },
    ],
    secret: 'secret',
  })
  expect(clusterSettings({ ...NODE, SKIPPR_CLUSTER_NODE_ID: 'a' }).nodeId).toBe('a')
})

it('refuses a malformed setting with one line naming it', () => {
  const refusal = (env: Record<string, string | undefined>) => {
    try {
      clusterSettings({ ...NODE, ...env })
    } catch (error) {
      return (error as Error).message
    }
    throw new Error('accepted')
  }
  expect(refusal({ SKIPPR_CLUSTER_LISTEN: '10.0.0.1:0' })).toBe(
    'SKIPPR_CLUSTER_LISTEN: 10.0.0.1:0 is not host:port (a port from 1 to 65535)',
  )
  expect(refusal({ SKIPPR_CLUSTER_PEERS: ' , ' })).toBe(
    'SKIPPR_CLUSTER_PEERS lists no node: list the other nodes',
  )
  expect(refusal({ SKIPPR_CLUSTER_PEERS: '=10.0.0.2:7401' })).toBe(
    'SKIPPR_CLUSTER_PEERS: =10.0.0.2:7401: the node id before = is empty',
  )
  expect(refusal({ SKIPPR_CLUSTER_PEERS: '10.0.0.1:7401,10.0.0.2:7401' })).toBe(
    'SKIPPR_CLUSTER_PEERS lists this node (10.0.0.1:7401): list only the others',
  )
  expect(refusal({ SKIPPR_CLUSTER_SECRET: undefined })).toMatch(
    /^WAL_STORAGE=clustered needs SKIPPR_CLUSTER_SECRET: /,
  )
})
