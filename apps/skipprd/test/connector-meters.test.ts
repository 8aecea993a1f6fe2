/**
 * Connector metrics on the sync's registry (connector-meters.ts): labelled by pipeline, a counter
 * adding up the runs of a pipeline (each run's connector counts from 0), a gauge the current run's.
 */
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { ConnectorMeters } from '../src/metrics/connector-meters.js'

async function text(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`))
}

describe('ConnectorMeters', () => {
  it('adds a counter up across runs, keeps the current run gauge, per pipeline', async () => {
    const registry = new Registry()
    const meters = new ConnectorMeters(registry)
    const run = (pipeline: string, requests: Map<string, number>, connected: number) => {
      const meter = meters.meter(pipeline)
      meter.counter('x_requests_total', 'Requests.', () =>
        [...requests].map(([code, value]) => ({ value, labels: { code } })),
      )
      meter.gauge('x_connected', 'Connected now.', () => connected)
    }
    run('a', new Map([['200', 3]]), 2)
    run('b', new Map([['200', 1]]), 1)
    run(
      'a',
      new Map([
        ['200', 4],
        ['400', 1],
      ]),
      5,
    )
    expect(await text(registry, 'x_requests_total')).toEqual([
      'x_requests_total{code="200",pipeline="a"} 7',
      'x_requests_total{code="400",pipeline="a"} 1',
      'x_requests_total{code="200",pipeline="b"} 1',
    ])
    expect(await text(registry, 'x_connected')).toEqual([
      'x_connected{pipeline="a"} 5',
      'x_connected{pipeline="b"} 1',
    ])
    expect(() => meters.meter('a').gauge('x_requests_total', 'Requests.', () => 0)).toThrow(
      'metric x_requests_total is a counter, not a gauge',
    )
  })
})
