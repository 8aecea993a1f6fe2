/**
 * The `config` check: the file loads with the loader every command uses, and the pipelines to check
 * have settings. The loader stops at the first `${NAME}` of `pipelines:` or `skippr:` that is not
 * set; here such a variable is given a stand-in and the file is loaded again, so that a missing
 * variable is the `env` check's failure, not the whole file's.
 */
import { hasCode } from '@skippr/connector-api'
import type { Env } from '../config/interpolate.js'
import { type ConfigFile, loadConfigFile } from '../config/load.js'
import type { ConnectorSection } from '../config/schema.js'
import {
  type PipelineSettings,
  pipelineNames,
  pipelineSettings,
  type RuntimeFlags,
} from '../config/settings.js'
import { ENV_NOT_SET } from '../errors.js'
import { checkStoreType } from '../runner/state-store.js'
import { checkWalStorage } from '../runner/wal-backend.js'
import { type Check, failed, messageOf, passed } from './check.js'

/** What a variable without a value holds while the file is read; no check that would use it runs. */
const STAND_IN = 'skippr-doctor-stand-in'

export interface DoctorConfig {
  readonly file: ConfigFile
  /** Variables `pipelines:` or `skippr:` name that have no value: the file was read with stand-ins. */
  readonly standIns: ReadonlySet<string>
  /** The pipelines to check (`-p`, else PIPELINE_NAME, else all), with their settings. */
  readonly pipelines: readonly PipelineSettings[]
}

export interface ConfigRequest {
  readonly config: string | undefined
  readonly pipeline: string | undefined
  readonly flags: RuntimeFlags
  readonly cwd: string
}

export function loadDoctorConfig(request: ConfigRequest): { check: Check; config?: DoctorConfig } {
  const env: Record<string, string | undefined> = { ...process.env }
  const standIns = new Set<string>()
  let file: ConfigFile
  try {
    file = loadWithStandIns(request, env, standIns)
  } catch (error) {
    return { check: failed('config', messageOf(error)) }
  }
  try {
    const wanted = request.pipeline ?? (file.env.PIPELINE_NAME || undefined)
    const names = wanted === undefined ? pipelineNames(file) : [wanted]
    const pipelines = names.map((name) => settingsOf(file, name, request))
    const count = `${pipelines.length} pipeline${pipelines.length === 1 ? '' : 's'}`
    return {
      check: passed('config', `${file.label} loads (${count} to check: ${names.join(', ') || 'none'})`),
      config: { file, standIns, pipelines },
    }
  } catch (error) {
    return { check: failed('config', messageOf(error)) }
  }
}

function loadWithStandIns(
  request: ConfigRequest,
  env: Record<string, string | undefined>,
  standIns: Set<string>,
) {
  for (;;) {
    try {
      return loadConfigFile({ config: request.config, cwd: request.cwd, env: env as Env })
    } catch (error) {
      const variable = (error as { variable?: unknown }).variable
      if (!hasCode(error, ENV_NOT_SET) || typeof variable !== 'string' || standIns.has(variable)) throw error
      standIns.add(variable)
      env[variable] = STAND_IN
    }
  }
}

/** The connector entries a pipeline uses, with their sections. */
export function usedEntries(settings: PipelineSettings): [ConnectorSection, string][] {
  const used: [ConnectorSection, string | undefined][] = [
    ['data_sources', settings.sourceEntry],
    ['data_sinks', settings.sinkEntry],
    ['schema_sinks', settings.schemaSinkEntry],
    ['deadletter_sinks', settings.deadletterSinkEntry],
  ]
  return used.filter((entry): entry is [ConnectorSection, string] => entry[1] !== undefined)
}

/** What `resolvePipeline` checks before it loads any connector. */
function settingsOf(file: ConfigFile, name: string, request: ConfigRequest): PipelineSettings {
  const settings = pipelineSettings(file, name, request.flags, request.cwd, false)
  checkStoreType(settings.store)
  checkWalStorage(settings)
  return settings
}
