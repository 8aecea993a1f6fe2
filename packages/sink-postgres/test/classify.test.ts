import { DatabaseError } from 'pg'
import { describe, expect, it } from 'vitest'
import { breaksConnection, classify } from '../src/classify.js'

const at = { table: '"public"."orders"', target: 'postgres://app@db:5432/shop' }

function serverError(code: string, message = 'boom'): DatabaseError {
  const error = new DatabaseError(message, 0, 'error')
  error.severity = 'ERROR'
  error.code = code
  error.detail = 'some detail'
  error.hint = 'some hint'
  error.position = '12'
  return error
}

function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.0.0.1:5432`), { code })
}

describe('classify', () => {
  it.each([
    ['40001', 'SKIPPR_PG_TRANSIENT'],
    ['40P01', 'SKIPPR_PG_TRANSIENT'],
    ['55P03', 'SKIPPR_PG_TRANSIENT'],
    ['57P01', 'SKIPPR_PG_TRANSIENT'],
    ['53300', 'SKIPPR_PG_TRANSIENT'],
    ['08006', 'SKIPPR_PG_UNAVAILABLE'],
  ])('retries SQLSTATE %s as %s', (state, code) => {
    const failure = classify(serverError(state), at)
    expect(failure.retry).toBe(true)
    expect(failure.error.code).toBe(code)
  })

  it.each([
    ['22P02', 'SKIPPR_PG_DATA_REJECTED'],
    ['22003', 'SKIPPR_PG_DATA_REJECTED'],
    ['23505', 'SKIPPR_PG_DATA_REJECTED'],
    ['42501', 'SKIPPR_PG_PERMISSION_DENIED'],
    ['28P01', 'SKIPPR_PG_REJECTED'],
    ['42P01', 'SKIPPR_PG_REJECTED'],
  ])('refuses SQLSTATE %s as fatal %s', (state, code) => {
    const failure = classify(serverError(state), at)
    expect(failure.retry).toBe(false)
    expect(failure.error.code).toBe(code)
    expect(failure.error.message).toContain(at.table)
  })

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'])('retries socket error %s', (code) => {
    const failure = classify(socketError(code), at)
    expect(failure).toMatchObject({ retry: true, error: { code: 'SKIPPR_PG_UNAVAILABLE' } })
    expect(failure.error.message).toContain(at.target)
  })

  it('retries a connection that ended without a code', () => {
    const failure = classify(new Error('Connection terminated unexpectedly'), at)
    expect(failure).toMatchObject({ retry: true, error: { code: 'SKIPPR_PG_UNAVAILABLE' } })
  })

  it('keeps the server fields and the cause', () => {
    const cause = serverError('22P02', 'invalid input syntax for type integer: "x"')
    const { error } = classify(cause, at)
    expect(error).toMatchObject({
      sqlState: '22P02',
      detail: 'some detail',
      hint: 'some hint',
      position: '12',
    })
    expect(error.cause).toBe(cause)
    expect(error.message).toContain('invalid input syntax for type integer: "x" (SQLSTATE 22P02)')
  })
})

describe('breaksConnection', () => {
  it('keeps a connection after a refused statement, drops it after a socket error or shutdown', () => {
    expect(breaksConnection(serverError('22P02'))).toBe(false)
    expect(breaksConnection(serverError('57P01'))).toBe(true)
    expect(breaksConnection(socketError('ECONNRESET'))).toBe(true)
  })
})
