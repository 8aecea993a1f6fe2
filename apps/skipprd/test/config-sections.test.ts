/** Sections of the vendor's files skipprd ignores, and the pipeline names it keeps for itself. */
import { afterEach, beforeEach, expect, it } from 'vitest'
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

const pipeline = (name: string) =>
  `data_sources:\n  sample:\n    Sample: { dataset: bikehire, rows: 10 }\npipelines:\n  ${name}:\n    data_source: data_sources.sample\n`

const VENDOR_SECTIONS =
  'dbt:\n  project_dir: ./transform\n  models: [daily_rentals]\nvector_sources:\n  logs:\n    type: file\n    include: [/var/log/app/*.log]\n'

const sync = () => runCli(['sync', '--once', '--output', 'text'], { cwd: p.dir })

it('accepts top-level dbt and vector_sources and syncs as without them', async () => {
  await p.write('skippr.yml', `${pipeline('bikehire')}${VENDOR_SECTIONS}`)
  const result = await sync()
  expect(result).toMatchObject({ code: 0, stderr: '' })
  expect(result.stdout).toContain('Sync complete: pipeline=bikehire namespaces=1 rows=10')
  expect(await p.logs()).toContain('the top-level section vector_sources is accepted and ignored by skipprd')
})

it('says, for the log, which sections it ignored', async () => {
  await p.write('skippr.yml', `${pipeline('bikehire')}${VENDOR_SECTIONS}`)
  const file = loadConfigFile({ cwd: p.dir, env: {} })
  expect(file.notices).toEqual([
    'skippr.yml: the top-level section dbt is accepted and ignored by skipprd',
    'skippr.yml: the top-level section vector_sources is accepted and ignored by skipprd',
  ])
  expect(Object.keys(file.data)).not.toContain('dbt')
})

it.each(['deadletters', 'wal', '_skippr', 'skippr', 'metadata', 'WAL'])(
  'refuses the reserved pipeline name %s in one line',
  async (name) => {
    await p.write('skippr.yml', pipeline(name))
    const result = await sync()
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `[skippr] config failed: skippr.yml: pipelines.${name}: the name ${name} is reserved (skipprd uses the names deadletters, wal, _skippr, skippr, metadata itself): rename the pipeline\n`,
    })
  },
)
