/**
 * Build step (`pnpm build`): writes dist/help.txt, what commander prints for `skipprd --help`, so
 * the CLI can print it without loading commander (see cli.cts).
 */
import { writeFileSync } from 'node:fs'
import { program } from './program.js'

writeFileSync(new URL('./help.txt', import.meta.url), program.helpInformation())
