import { expect, it } from 'vitest'
import { CHAOS_POINTS, createChaos } from '../src/runner/chaos.js'

function visits(env: Record<string, string>, rounds: number): string[] {
  const fired: string[] = []
  const chaos = createChaos(
    env,
    (line) => fired.push(line),
    () => {},
  )
  for (let i = 0; i < rounds; i++) for (const point of CHAOS_POINTS) chaos.at(point, `visit ${i}`)
  return fired
}

it('kills with the configured probability, announcing the point first', () => {
  const fired = visits({ SKIPPR_CHAOS_PROBABILITY: '1', SKIPPR_CHAOS_POINTS: 'after-commit' }, 3)
  expect(fired).toEqual(
    [0, 1, 2].map((i) => `chaos mode: killing the process with SIGKILL at after-commit (visit ${i})`),
  )
  expect(visits({ SKIPPR_CHAOS_PROBABILITY: '0' }, 100)).toEqual([])
})

it('repeats the same kill points for the same seed', () => {
  const env = { SKIPPR_CHAOS_PROBABILITY: '0.1', SKIPPR_CHAOS_SEED: 'round-7' }
  const first = visits(env, 200)
  expect(first.length).toBeGreaterThan(20)
  expect(first.length).toBeLessThan(140)
  expect(visits(env, 200)).toEqual(first)
  expect(visits({ ...env, SKIPPR_CHAOS_SEED: 'round-8' }, 200)).not.toEqual(first)
})

it('kills during a piece of work, after it started and before it ended', async () => {
  const events: string[] = []
  const chaos = createChaos(
    { SKIPPR_CHAOS_PROBABILITY: '1' },
    (line) => events.push(line),
    () => events.push('killed'),
  )
  const work = new Promise<string>((resolve) => setTimeout(() => resolve('done'), 120))
  events.push('started')
  const result = await chaos.during('mid-write', 'batch 3', work)
  events.push(result)
  expect(events).toEqual([
    'started',
    'chaos mode: killing the process with SIGKILL at mid-write (batch 3)',
    'killed',
    'done',
  ])
})
