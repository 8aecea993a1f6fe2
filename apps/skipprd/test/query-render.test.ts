import { describe, expect, it } from 'vitest'
import { render, renderPlain } from '../src/query/render.js'
import { type Cell, rowsOf, type StatementResult } from '../src/query/result.js'

async function rendered(result: StatementResult, plain: boolean): Promise<string> {
  let out = ''
  await render(result, plain, (text) => {
    out += text
  })
  return out
}

async function* chunks(...parts: Cell[][][]): AsyncGenerator<Cell[][]> {
  yield* parts
}

describe('render', () => {
  it('--plain: one JSON line across chunks, every value a string, NULL as "NULL"', async () => {
    let out = ''
    await renderPlain(['a', 'b'], chunks([['1', null]], [], [['"q"', 'é\n']]), (t) => {
      out += t
    })
    expect(out).toBe('{"header":["a","b"],"rows":[["1","NULL"],["\\"q\\"","é\\n"]]}\n')
    expect(await rendered(rowsOf(['x'], [false], []), true)).toBe('{"header":["x"],"rows":[]}\n')
  })

  it('table: aligned columns, numbers to the right, escaped line breaks, a row count', async () => {
    const result = rowsOf(
      ['name', 'n'],
      [false, true],
      [
        ['ünï', '5'],
        ['a\tb', '1234'],
        [null, null],
      ],
    )
    expect(await rendered(result, false)).toBe(
      ['name | n', '-----+-----', 'ünï  |    5', 'a\\tb | 1234', 'NULL | NULL', '(3 rows)', ''].join('\n'),
    )
    expect(await rendered(rowsOf(['only'], [false], [['x']]), false)).toBe('only\n----\nx\n(1 row)\n')
  })

  it('documents as JSON (indented unless --plain) and messages as a line', async () => {
    const document: StatementResult = { kind: 'document', value: { a: [1] } }
    expect(await rendered(document, true)).toBe('{"a":[1]}\n')
    expect(await rendered(document, false)).toBe('{\n  "a": [\n    1\n  ]\n}\n')
    expect(await rendered({ kind: 'message', text: 'done.' }, true)).toBe('done.\n')
  })
})
