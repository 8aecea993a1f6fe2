import { describe, expect, it } from 'vitest'
import { describeAdmin, isBlank, parseAdminStatement, splitStatements } from '../src/query/statements.js'

describe('parseAdminStatement', () => {
  it('recognises every admin statement, in any case, with bare or quoted names', () => {
    expect(parseAdminStatement('ENABLE PIPELINE bikehire')).toEqual({ kind: 'enable', pipeline: 'bikehire' })
    expect(parseAdminStatement('  disable   pipeline\n  bike-hire_2 ')).toEqual({
      kind: 'disable',
      pipeline: 'bike-hire_2',
    })
    expect(parseAdminStatement('Reset Pipeline "odd ""name"""')).toEqual({
      kind: 'reset',
      pipeline: 'odd "name"',
    })
    expect(parseAdminStatement('drop pipeline p -- gone')).toEqual({ kind: 'drop', pipeline: 'p' })
    expect(parseAdminStatement('SHOW PIPELINE p')).toEqual({ kind: 'show', pipeline: 'p' })
    expect(parseAdminStatement('show stats for p')).toEqual({
      kind: 'stats',
      pipeline: 'p',
      namespace: undefined,
    })
    expect(parseAdminStatement('SHOW STATS FOR p."my ns"')).toEqual({
      kind: 'stats',
      pipeline: 'p',
      namespace: 'my ns',
    })
  })

  it('leaves SQL, including look-alikes, to DuckDB', () => {
    for (const sql of [
      'SELECT 1',
      'SHOW TABLES',
      'DROP TABLE p',
      'DROP PIPELINE',
      'RESET PIPELINE a b',
      "SELECT 'ENABLE PIPELINE p'",
      'SHOW STATS FOR p.q.r',
    ]) {
      expect(parseAdminStatement(sql), sql).toBeUndefined()
    }
  })

  it('writes a statement back for messages', () => {
    expect(describeAdmin({ kind: 'reset', pipeline: 'p' })).toBe('RESET PIPELINE p')
    expect(describeAdmin({ kind: 'stats', pipeline: 'p', namespace: 'n' })).toBe('SHOW STATS FOR p.n')
  })
})

describe('splitStatements', () => {
  it('splits at semicolons outside quotes and comments, and keeps the unfinished rest', () => {
    const text = `SELECT 'a;b', "x;y" FROM t; -- one; two
SELECT 1 /* ; */ ;;  SELECT 'it''s;' ; SELECT 2`
    expect(splitStatements(text)).toEqual({
      complete: [`SELECT 'a;b', "x;y" FROM t`, `-- one; two\nSELECT 1 /* ; */`, `SELECT 'it''s;'`],
      rest: ' SELECT 2',
    })
  })

  it('treats an unterminated quote or comment as unfinished', () => {
    expect(splitStatements("SELECT 'a;")).toEqual({ complete: [], rest: "SELECT 'a;" })
    expect(splitStatements('SELECT 1 /* ;')).toEqual({ complete: [], rest: 'SELECT 1 /* ;' })
  })

  it('knows text with only comments and whitespace is blank', () => {
    expect(isBlank('  -- nothing\n /* here */ ')).toBe(true)
    expect(isBlank("-- x\n'--'")).toBe(false)
  })
})
