/**
 * `skipprd doctor [-p <pipeline>]`: checks what a sync needs, one line per check
 * (`[ok] <name>: <message>` / `[FAIL] …`, or `{"ok":…,"checks":[…]}` with `--output json`), and
 * exits 1 when any fails. It does not go through runCommand: a config that does not load is one
 * of its checks, not the end of the command. Every line passes through the redactor, which knows
 * the secrets of each connector resolved.
 */
import { jsonReport, textReport } from '../doctor/check.js'
import { runDoctor } from '../doctor/run.js'
import { silentPino } from '../logging.js'
import { Redactor } from '../redact.js'
import { EXIT_FAILURE, EXIT_OK, failureLine, type GlobalOptions } from './common.js'
import { watchStdout } from './stdout.js'

export async function doctor(options: GlobalOptions): Promise<number> {
  const redactor = new Redactor()
  // A reader that went away (`| head -1`) must not end the process with a stack trace.
  const stdout = watchStdout(process.stdout, () => {})
  try {
    const checks = await runDoctor({
      config: options.config,
      pipeline: options.pipeline,
      flags: options,
      cwd: process.cwd(),
      // Connectors log to it; the report is what doctor says.
      logger: silentPino(),
      redactor,
    })
    const report = options.output === 'json' ? jsonReport(checks) : textReport(checks)
    if (stdout.error === undefined) process.stdout.write(redactor.redact(report))
    return checks.every((check) => check.ok) ? EXIT_OK : EXIT_FAILURE
  } catch (error) {
    process.stderr.write(redactor.redact(`${failureLine('doctor', error)}\n`))
    return EXIT_FAILURE
  }
}
