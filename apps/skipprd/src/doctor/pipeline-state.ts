/**
 * `wal:<pipeline>` (the WAL reads back: a read snapshot, its pending batches counted),
 * `lease:<pipeline>` (who holds the writer lease) and `state` (the state store opens). All of it
 * reads, as `skipprd query` does: no lease is taken, and an embedded store a pipeline never
 * created is not opened (opening would create it).
 */
import type { LeaseInfo } from '@skippr/state'
import type { PipelineSettings } from '../config/settings.js'
import type { PipelineCatalog, PipelineHandle } from '../query/catalog.js'
import { summarisePending } from '../query/pending.js'
import { neverRanHere } from '../runner/state-store.js'
import { type Check, failed, messageOf, passed } from './check.js'

export interface StateChecks {
  /** `wal:<p>` and `lease:<p>` of each pipeline, in order. */
  readonly pipelines: readonly Check[]
  readonly state: Check
}

export async function stateChecks(
  catalog: PipelineCatalog,
  pipelines: readonly PipelineSettings[],
): Promise<StateChecks> {
  const checks: Check[] = []
  const stores: string[] = []
  const failures: string[] = []
  for (const settings of pipelines) {
    const { name, store } = settings
    const where = `${store.type} store of pipeline '${name}' (data dir ${settings.dataDir})`
    if (neverRanHere(settings)) {
      checks.push(passed(`wal:${name}`, 'empty: the pipeline has not run here yet'))
      checks.push(passed(`lease:${name}`, 'free: never taken'))
      stores.push(`${where}: not created yet (the first sync creates it)`)
      continue
    }
    let handle: PipelineHandle
    try {
      handle = await catalog.open(name)
    } catch (error) {
      failures.push(`${where}: ${messageOf(error)}`)
      checks.push(failed(`wal:${name}`, 'not checked: the state store does not open (see state)'))
      checks.push(failed(`lease:${name}`, 'not checked: the state store does not open (see state)'))
      continue
    }
    stores.push(`${where}: opens`)
    checks.push(await walCheck(handle))
    checks.push(await leaseCheck(handle))
  }
  const state =
    failures.length > 0 ? failed('state', failures.join('; ')) : passed('state', stores.join('; '))
  return { pipelines: checks, state }
}

async function walCheck(handle: PipelineHandle): Promise<Check> {
  const name = `wal:${handle.settings.name}`
  try {
    const pending = await summarisePending(handle)
    const rows = [...pending.namespaces.values()].reduce((sum, totals) => sum + totals.rows, 0)
    return passed(name, `reads back: ${pending.batches} pending batch(es), ${rows} row(s) not landed yet`)
  } catch (error) {
    return failed(name, `cannot read the WAL: ${messageOf(error)}`)
  }
}

async function leaseCheck(handle: PipelineHandle): Promise<Check> {
  const name = `lease:${handle.settings.name}`
  try {
    return passed(name, describeLease(await handle.state.getLeaseInfo(), Date.now()))
  } catch (error) {
    return failed(name, `cannot read the writer lease: ${messageOf(error)}`)
  }
}

function describeLease(lease: LeaseInfo | undefined, now: number): string {
  if (lease === undefined) return 'free: never taken'
  const ago = Math.round((now - lease.heartbeatAt.getTime()) / 1000)
  if (lease.released) return `free: last held by ${lease.owner}, released`
  if (lease.live) return `held by ${lease.owner} (renewed ${ago} s ago): a sync is running`
  return `free: ${lease.owner} stopped renewing it ${ago} s ago (its TTL is ${Math.round(lease.ttlMs / 1000)} s); the next sync takes it over`
}
