/**
 * Which config file the built CLI reads, in which format, and its one-line answers when
 * `--config` or `DATA_DIR` point at the wrong kind of thing.
 */
import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadConfigFile } from '../src/config/load.js'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  p = await project()
})
afterEach(async () => {
  await p.remove()
})

/** A 10-row Sample pipeline named `name`, without a destination: its rows stay in the WAL. */
function yamlConfig(name: string): string {
  return `data_sources:\n  sample:\n    Sample: { dataset: bikehire, rows: 10 }\npipelines:\n  ${name}:\n    data_source: data_sources.sample\n`
}

const sync = (args: readonly string[] = [], env: Record<string, string> = {}) =>
  runCli(['sync', '--once', '--output', 'text', ...args], { cwd: p.dir, env })

/** The pipelines a run synced, from its text output. */
function synced(stdout: string): string[] {
  return [...stdout.matchAll(/^Sync complete: pipeline=(\S+)/gm)].map((m) => m[1] as string)
}

describe('lookup in the working directory', () => {
  it('reads skippr.yml, skippr.yaml, skipprd.yml, skipprd.yaml, skipprd.json, the first one found', async () => {
    const files = ['skipprd.json', 'skipprd.yaml', 'skipprd.yml', 'skippr.yaml', 'skippr.yml']
    for (const [i, name] of files.entries()) {
      const pipeline = `from_${i}`
      await p.write(
        name,
        name.endsWith('.json')
          ? JSON.stringify({
              data_sources: { sample: { Sample: { dataset: 'bikehire', rows: 10 } } },
              pipelines: { [pipeline]: { data_source: 'data_sources.sample' } },
            })
          : yamlConfig(pipeline),
      )
      const result = await sync()
      expect(result.stderr).toBe('')
      expect(synced(result.stdout)).toEqual([pipeline])
    }
  })

  it('notes, for the log, the files beside it that it does not read', async () => {
    await p.write('skipprd.json', '{}')
    await p.write('skippr.yml', yamlConfig('bikehire'))
    expect(loadConfigFile({ cwd: p.dir, env: {} }).notices).toEqual([
      'skipprd.json is not read: skippr.yml comes first in the same directory',
    ])
  })

  it(`reads \${NAME} references in a JSON file like in YAML`, async () => {
    await p.write(
      'skipprd.json',
      JSON.stringify({
        data_sources: { sample: { Sample: { dataset: 'bikehire', rows: 10 } } },
        pipelines: { bikehire: { data_source: 'data_sources.sample', data_dir: `\${PIPELINE_DIR}` } },
      }),
    )
    const result = await sync([], { PIPELINE_DIR: 'json-data' })
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain('Sync complete: pipeline=bikehire namespaces=1 rows=10')
    expect(existsSync(path.join(p.dir, 'json-data', 'wal'))).toBe(true)
  })

  it('says in one line that a JSON file does not parse', async () => {
    await p.write('skipprd.json', '{ "pipelines": { } ')
    const result = await sync()
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^\[skippr\] config failed: skipprd\.json: not valid JSON: [^\n]+\n$/)
  })

  it(`reads skipprd.toml: the same shape, \${NAME} references in its strings`, async () => {
    await p.write(
      'skipprd.toml',
      [
        '[data_sources.sample.Sample]',
        'dataset = "bikehire"',
        'rows = 10',
        '[pipelines.bikehire]',
        'data_source = "data_sources.sample"',
        `data_dir = "\${PIPELINE_DIR}"`,
        '',
      ].join('\n'),
    )
    const result = await sync([], { PIPELINE_DIR: 'toml-data' })
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain('Sync complete: pipeline=bikehire namespaces=1 rows=10')
    expect(existsSync(path.join(p.dir, 'toml-data', 'wal'))).toBe(true)
  })

  it('says in one line where a TOML file does not parse', async () => {
    await p.write('skipprd.toml', '[pipelines.bikehire]\ndata_source = \n')
    const result = await sync()
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^\[skippr\] config failed: skipprd\.toml:2:\d+: not valid TOML: [^\n]+\n$/)
  })

  it('names every file it looked for when there is none', async () => {
    const result = await sync()
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `[skippr] config failed: no skippr.yml, skippr.yaml, skipprd.yml, skipprd.yaml, skipprd.toml or skipprd.json in ${p.dir}: create skippr.yml there or pass --config <path>\n`,
    )
  })
})

describe('--config and DATA_DIR of the wrong kind: one line, exit 1', () => {
  it('a directory as --config (or SKIPPR_CONFIG_FILE) names the file to pass', async () => {
    await mkdir(path.join(p.dir, 'etc'))
    const empty = await sync(['--config', 'etc'])
    expect(empty).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        "[skippr] config failed: etc: is a directory, not a config file: pass the config file's path, e.g. --config etc/skippr.yml\n",
    })
    await p.write('etc/skipprd.yaml', yamlConfig('bikehire'))
    const holding = await sync([], { SKIPPR_CONFIG_FILE: 'etc' })
    expect(holding).toMatchObject({
      code: 1,
      stderr:
        '[skippr] config failed: etc: is a directory, not a config file: pass the file in it: --config etc/skipprd.yaml\n',
    })
    expect(synced((await sync(['--config', 'etc/skipprd.yaml'])).stdout)).toEqual(['bikehire'])
  })

  it('a file as DATA_DIR, or on its way, is refused before anything is written', async () => {
    await p.write('skippr.yml', yamlConfig('bikehire'))
    await p.write('state', 'not a directory')
    const file = await sync([], { DATA_DIR: 'state' })
    expect(file).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        '[skippr] config failed: DATA_DIR: state is a file, not a directory: point DATA_DIR at a directory (it is created if missing)\n',
    })
    const below = await sync([], { DATA_DIR: 'state/pipelines' })
    expect(below).toMatchObject({
      code: 1,
      stderr: `[skippr] config failed: DATA_DIR: ${path.join(p.dir, 'state')} is a file, not a directory: point DATA_DIR at a directory (it is created if missing)\n`,
    })
    // The refusal is logged where logs go without DATA_DIR.
    expect(await p.logs()).toContain('DATA_DIR: state is a file, not a directory')
  })

  it("a file as a pipeline's data_dir names the pipeline's key", async () => {
    await p.write('skippr.yml', `${yamlConfig('bikehire')}    data_dir: ./state\n`)
    await p.write('state', 'not a directory')
    const result = await sync()
    expect(result).toMatchObject({
      code: 1,
      stderr:
        '[skippr] config failed: skippr.yml: pipelines.bikehire.data_dir: ./state is a file, not a directory: point data_dir at a directory (it is created if missing)\n',
    })
    await rm(path.join(p.dir, 'state'))
    expect(synced((await sync()).stdout)).toEqual(['bikehire'])
  })
})
