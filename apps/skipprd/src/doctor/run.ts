/**
 * `skipprd doctor`'s checks, in order: config, env, connectors, each used connector entry,
 * data_dir, wal:<p> and lease:<p> per pipeline, state. A config that does not load ends the list
 * there; so does one read with stand-ins for unset variables of its pipelines (their settings
 * would be guesses), after the connector checks.
 */
import type { Logger } from 'pino'
import type { RuntimeFlags } from '../config/settings.js'
import { PipelineCatalog } from '../query/catalog.js'
import type { Redactor } from '../redact.js'
import type { Check } from './check.js'
import { loadDoctorConfig } from './config.js'
import { connectorsCheck, reachabilityChecks, resolveEntries } from './connectors.js'
import { dataDirChecks } from './data-dir.js'
import { envCheck } from './env.js'
import { stateChecks } from './pipeline-state.js'

export interface DoctorRequest {
  readonly config: string | undefined
  readonly pipeline: string | undefined
  readonly flags: RuntimeFlags
  readonly cwd: string
  readonly logger: Logger
  readonly redactor: Redactor
}

export async function runDoctor(request: DoctorRequest): Promise<Check[]> {
  const { check, config } = loadDoctorConfig(request)
  if (config === undefined) return [check]
  const entries = await resolveEntries(config, request.redactor)
  const checks = [check, envCheck(config), connectorsCheck(entries)]
  checks.push(...(await reachabilityChecks(entries, config.file.dir, request.logger)))
  if (config.standIns.size > 0) return checks
  checks.push(...(await dataDirChecks(config.pipelines)))
  const catalog = new PipelineCatalog(config.file, request.flags, request.cwd, request.logger, (secrets) =>
    request.redactor.add(secrets),
  )
  try {
    const state = await stateChecks(catalog, config.pipelines)
    checks.push(...state.pipelines, state.state)
  } finally {
    await catalog.close()
  }
  return checks
}
