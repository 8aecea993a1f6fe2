import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request as httpsRequest } from 'node:https'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type Meter, type MeterRead, type SourceChunk, silentLogger } from '@skippr/connector-api'
import * as v from 'valibot'
import { afterEach, describe, expect, it } from 'vitest'
import { httpServerConfig } from '../src/config.js'
import { HttpServerSource } from '../src/server.js'

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** A source read by a stand-in runner that commits every chunk `commitAfterMs` after it arrives. */
async function serve(config: Record<string, unknown>, from?: unknown, commit = true, meter?: Meter) {
  const port = await freePort()
  const source = new HttpServerSource(v.parse(httpServerConfig, { listen: `127.0.0.1:${port}`, ...config }), {
    configDir: '.',
    dataDir: '.',
    pipeline: 'p',
    logger: silentLogger,
    meter,
  })
  const stop = new AbortController()
  const chunks: SourceChunk[] = []
  const reading = (async () => {
    for await (const chunk of source.read(from as never, { signal: stop.signal, follow: true })) {
      chunks.push(chunk)
      if (commit) setTimeout(() => source.committed(chunk.offset), 5)
    }
  })()
  const post = async (body: string, headers: Record<string, string> = {}, path = '/') => {
    for (;;) {
      const answer = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers, body }).catch(
        () => undefined,
      )
      if (answer) return { status: answer.status, body: await answer.text(), headers: answer.headers }
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const close = async () => {
    stop.abort()
    await reading
    await source.close()
  }
  running.push(close)
  return { source, chunks, post, close, stop }
}

const running: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of running.splice(0)) await close()
})

describe('HttpServer source', () => {
  it('answers 200 after the commit and dedups an Idempotency-Key, also after a restart', async () => {
    const first = await serve({ namespace: 'events' })
    expect((await first.post('{"a":1}\n', { 'idempotency-key': 'k1' })).body).toBe('{"rows":1}\n')
    expect((await first.post('{"a":1}\n', { 'idempotency-key': 'k1' })).body).toBe(
      '{"rows":0,"duplicate":true}\n',
    )
    expect(first.chunks).toHaveLength(1)
    const offset = first.chunks[0]!.offset
    await first.close()
    const second = await serve({ namespace: 'events' }, offset)
    expect((await second.post('{"a":1}\n', { 'idempotency-key': 'k1' })).body).toBe(
      '{"rows":0,"duplicate":true}\n',
    )
    expect((await second.post('{"a":2}\n', { 'idempotency-key': 'k2' })).status).toBe(200)
    expect(second.chunks.map((c) => (c.offset as { seq: number }).seq)).toEqual([2])
  })

  it('answers 400, 401, 404, 413 and 429 without taking the rows', async () => {
    const { post, chunks } = await serve(
      { token: 'sekret', max_request_bytes: 64, max_pending_bytes: 1 },
      undefined,
      false,
    )
    const auth = { authorization: 'Bearer sekret' }
    expect(await post('{"a":1}\n', { authorization: 'Bearer other' })).toMatchObject({ status: 401 })
    expect(await post('{"a":1}\n', auth, '/bad-name')).toMatchObject({ status: 404 })
    expect(await post('{"a":1}\nnope\n', auth, '/events')).toMatchObject({
      status: 400,
      body: expect.stringContaining('line 2: '),
    })
    expect(await post(`{"a":"${'x'.repeat(100)}"}\n`, auth, '/events')).toMatchObject({ status: 413 })
    expect(chunks).toHaveLength(0)
    // Nothing commits here: the first request waits, the next is over max_pending_bytes.
    void post('{"a":1}\n', auth, '/events')
    await new Promise((r) => setTimeout(r, 100))
    const refused = await post('{"a":2}\n', auth, '/events')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
  })

  it('answers 429 while the runner says the WAL is full, keeps answering committed keys, and takes requests again after', async () => {
    const metrics = new Map<string, MeterRead>()
    const meter: Meter = { counter: (name, _, read) => metrics.set(name, read), gauge: () => {} }
    const { source, post, chunks } = await serve({ namespace: 'events' }, undefined, true, meter)
    expect((await post('{"a":1}\n', { 'idempotency-key': 'k1' })).status).toBe(200)
    source.walFull(true)
    const refused = await post('{"a":2}\n')
    expect(refused).toMatchObject({ status: 429, body: expect.stringContaining('the WAL is full') })
    expect(refused.headers.get('retry-after')).toBe('1')
    expect((await post('{"a":1}\n', { 'idempotency-key': 'k1' })).body).toBe('{"rows":0,"duplicate":true}\n')
    expect(chunks).toHaveLength(1)
    source.walFull(false)
    expect((await post('{"a":3}\n')).status).toBe(200)
    expect(chunks).toHaveLength(2)
    const read = (name: string) => metrics.get(`skippr_push_http_${name}`)!()
    expect(read('wal_full_refusals_total')).toBe(1)
    expect(read('requests_total')).toEqual([
      { value: 3, labels: { code: '200' } },
      { value: 1, labels: { code: '429' } },
    ])
    expect(read('rows_accepted_total')).toBe(2)
    expect(read('request_bytes_total')).toBe(4 * '{"a":1}\n'.length)
  })

  it('answers 500 when the commit never happened, and a request with the same key waits for it', async () => {
    const { source, post, chunks } = await serve({ namespace: 'e' }, undefined, false)
    const first = post('{"a":1}\n', { 'idempotency-key': 'k' })
    while (chunks.length === 0) await new Promise((r) => setTimeout(r, 10))
    const retry = post('{"a":1}\n', { 'idempotency-key': 'k' })
    await new Promise((r) => setTimeout(r, 50))
    await source.close()
    expect((await first).status).toBe(500)
    expect((await retry).status).toBe(500)
    expect(chunks).toHaveLength(1)
  })

  it('answers 503 once the run stops reading', async () => {
    const { post, stop } = await serve({ namespace: 'e' })
    expect((await post('{"a":1}\n')).status).toBe(200)
    stop.abort()
    await new Promise((r) => setTimeout(r, 20))
    const answer = await post('{"a":2}\n')
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('1')
  })

  it('takes CSV with a header and JSON arrays per format', async () => {
    const csv = await serve({ format: 'csv' })
    expect((await csv.post('id,name\n1,a\n2,b\n', {}, '/people')).body).toBe('{"rows":2}\n')
    expect(csv.chunks[0]).toMatchObject({ namespace: 'people', rows: 2 })
    expect(new TextDecoder().decode(csv.chunks[0]!.body)).toBe('{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n')
    const json = await serve({ format: 'json', namespace: 'e' })
    expect((await json.post('[{"a":1},{"a":2},{"a":3}]')).body).toBe('{"rows":3}\n')
  })

  it('serves HTTPS with tls_cert and tls_key', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'http-tls-'))
    running.push(() => rm(dir, { recursive: true, force: true }))
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    )
    const port = await freePort()
    const source = new HttpServerSource(
      v.parse(httpServerConfig, {
        listen: `127.0.0.1:${port}`,
        namespace: 'e',
        tls_cert: 'cert.pem',
        tls_key: 'key.pem',
      }),
      { configDir: dir, dataDir: dir, pipeline: 'p', logger: silentLogger },
    )
    await source.check()
    const stop = new AbortController()
    const reading = (async () => {
      for await (const chunk of source.read(undefined, { signal: stop.signal, follow: true }))
        source.committed(chunk.offset)
    })()
    running.push(async () => {
      stop.abort()
      await reading
      await source.close()
    })
    const ca = await readFile(path.join(dir, 'cert.pem'))
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const attempt = () => {
        const request = httpsRequest(
          { host: '127.0.0.1', port, method: 'POST', path: '/', ca },
          (response) => {
            response.resume()
            resolve(response.statusCode)
          },
        )
        request.on('error', (error: NodeJS.ErrnoException) =>
          error.code === 'ECONNREFUSED' ? setTimeout(attempt, 20) : reject(error),
        )
        request.end('{"a":1}\n')
      }
      attempt()
    })
    expect(status).toBe(200)
  })

  it('names an unreadable TLS file in one line', async () => {
    const source = new HttpServerSource(
      v.parse(httpServerConfig, { tls_cert: 'missing.pem', tls_key: 'missing.pem' }),
      { configDir: tmpdir(), dataDir: tmpdir(), pipeline: 'p', logger: silentLogger },
    )
    await expect(source.check()).rejects.toThrow('HttpServer tls_cert: cannot read missing.pem (ENOENT)')
  })
})
