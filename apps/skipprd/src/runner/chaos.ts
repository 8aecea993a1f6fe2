/**
 * Chaos mode: SIGKILL the process at random points of a sync, so an operator can prove recovery
 * against their own pipeline (the README's "Chaos mode"). Each point is
 * a moment where a crash is hardest to survive: a batch committed but not forwarded, a sink write
 * half done, a batch landed but not yet marked landed in the WAL.
 *
 * Tunable by environment, so tests and the chaos harness can make kills likely and repeatable:
 * - SKIPPR_CHAOS_PROBABILITY: chance of a kill at each point visited (default 0.05)
 * - SKIPPR_CHAOS_POINTS: comma-separated subset of CHAOS_POINTS (default all)
 * - SKIPPR_CHAOS_SEED: seed of the random sequence (default: random)
 */
import type { Env } from '../config/interpolate.js'

export const CHAOS_POINTS = ['after-commit', 'mid-write', 'after-land', 'mid-read'] as const
export type ChaosPoint = (typeof CHAOS_POINTS)[number]

const DEFAULT_PROBABILITY = 0.05
/** The longest a mid-write kill waits after the write started. */
const MID_WRITE_MAX_DELAY_MS = 50

export interface Chaos {
  /** Maybe kills the process now. */
  at(point: ChaosPoint, detail: string): void
  /** Maybe kills the process while `work` runs (a random delay after it starts). */
  during<T>(point: ChaosPoint, detail: string, work: Promise<T>): Promise<T>
}

export const noChaos: Chaos = {
  at() {},
  during: (_point, _detail, work) => work,
}

/** `announce` must write its line synchronously: nothing runs after the kill. */
export function createChaos(env: Env, announce: (line: string) => void, kill = killNow): Chaos {
  const probability = chaosProbability(env.SKIPPR_CHAOS_PROBABILITY)
  const points = chaosPoints(env.SKIPPR_CHAOS_POINTS)
  const random = mulberry32(
    env.SKIPPR_CHAOS_SEED ? hashSeed(env.SKIPPR_CHAOS_SEED) : (Math.random() * 2 ** 32) >>> 0,
  )
  const fire = (point: ChaosPoint, detail: string): void => {
    announce(`chaos mode: killing the process with SIGKILL at ${point} (${detail})`)
    kill()
  }
  const roll = (point: ChaosPoint): boolean => points.has(point) && random() < probability
  return {
    at(point, detail) {
      if (roll(point)) fire(point, detail)
    },
    during(point, detail, work) {
      if (!roll(point)) return work
      const timer = setTimeout(() => fire(point, detail), Math.floor(random() * MID_WRITE_MAX_DELAY_MS))
      return work.finally(() => clearTimeout(timer))
    },
  }
}

function killNow(): void {
  process.kill(process.pid, 'SIGKILL')
}

function chaosProbability(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_PROBABILITY
  const value = Number(raw)
  return Number.isFinite(value) && value >= 0 && value <= 1 ? value : DEFAULT_PROBABILITY
}

function chaosPoints(raw: string | undefined): ReadonlySet<ChaosPoint> {
  if (!raw) return new Set(CHAOS_POINTS)
  const wanted = raw.split(',').map((p) => p.trim())
  return new Set(CHAOS_POINTS.filter((p) => wanted.includes(p)))
}

function hashSeed(seed: string): number {
  let h = 2166136261
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619)
  return h >>> 0
}

/** A small deterministic PRNG: the same seed gives the same kill points. */
function mulberry32(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
