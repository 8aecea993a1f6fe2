import { describe, expect, it } from 'vitest'
import {
  closeReason,
  decodeClientMessage,
  decodeServerMessage,
  encodeAck,
  encodeData,
  encodeError,
  encodeHello,
  encodeLoneRecord,
  encodeWelcome,
  loneDataMessage,
  SUBPROTOCOL,
  SUBPROTOCOLS,
} from '../src/wire.js'

const hex = (b: Buffer): string => b.toString('hex')
const bytes = (h: string): Buffer => Buffer.from(h.replace(/\s+/g, ''), 'hex')

describe('wire protocol codecs', () => {
  it('names the version in the subprotocol, and still speaks version 1', () => {
    expect(SUBPROTOCOL).toBe('skippr-sf.v2')
    expect(SUBPROTOCOLS).toEqual(['skippr-sf.v2', 'skippr-sf.v1'])
  })

  it('carries the slot id in HELLO after the sender id (flag bit 1), as 16 bytes', () => {
    const slotId = '0123abcd-4567-89ef-0123-456789abcdef'
    const msg = encodeHello('ab', true, slotId)
    expect(hex(msg)).toBe('01' + '03' + '0002' + '6162' + '0123abcd456789ef0123456789abcdef')
    expect(decodeClientMessage(msg)).toEqual({ type: 'hello', senderId: 'ab', durableAck: true, slotId })
    // A version 1 HELLO names no slot.
    expect(decodeClientMessage(bytes('01 00 0002 6162'))).toMatchObject({ slotId: undefined })
    expect(() => encodeHello('ab', false, 'not-a-uuid')).toThrow(/not a UUID/)
    expect(() => decodeClientMessage(bytes('01 02 0002 6162 0123'))).toThrow(/and a slot id in a 8-byte/)
  })

  it('encodes HELLO as type, flags, u16 length, sender id', () => {
    expect(hex(encodeHello('ab', true))).toBe('01 01 0002 6162'.replace(/ /g, ''))
    expect(hex(encodeHello('ab', false))).toBe('0100' + '0002' + '6162')
    expect(decodeClientMessage(bytes('01 01 0002 6162'))).toEqual({
      type: 'hello',
      senderId: 'ab',
      durableAck: true,
    })
  })

  it('encodes DATA as first FSN, count and length-prefixed payloads', () => {
    const msg = encodeData(7n, [Buffer.from('hi'), Buffer.alloc(0), Buffer.from([0xff])])
    expect(hex(msg)).toBe(
      '02' + '0000000000000007' + '00000003' + '00000002' + '6869' + '00000000' + '00000001' + 'ff',
    )
    const decoded = decodeClientMessage(msg)
    expect(decoded.type).toBe('data')
    if (decoded.type !== 'data') return
    expect(decoded.frames.map((f) => [f.fsn, Buffer.from(f.payload).toString('hex')])).toEqual([
      [7n, '6869'],
      [8n, ''],
      [9n, 'ff'],
    ])
  })

  it('copies a record into a DATA message of its own, whose FSN is set when it is sent', () => {
    const payload = Buffer.from('hello')
    const copy = encodeLoneRecord(payload)
    payload.fill(0)
    expect(copy.toString()).toBe('hello')
    const message = loneDataMessage(copy, 42n)
    expect(message.buffer).toBe(copy.buffer)
    expect(hex(message)).toBe(hex(encodeData(42n, [Buffer.from('hello')])))
  })

  it('encodes the receiver messages', () => {
    expect(hex(encodeWelcome(1 << 20))).toBe('8100100000')
    expect(hex(encodeAck(258n))).toBe('820000000000000102')
    expect(hex(encodeAck(258n, true))).toBe('830000000000000102')
    expect(hex(encodeError('DROP', 5n, 'bad'))).toBe('8402' + '0000000000000005' + '626164')
    expect(hex(encodeError('HALT', 0n, ''))).toBe('8401' + '0000000000000000')
  })

  it('decodes what it encodes on the receiver side', () => {
    expect(decodeServerMessage(encodeWelcome(4096))).toEqual({ type: 'welcome', maxFrameBytes: 4096 })
    expect(decodeServerMessage(encodeAck(9n))).toEqual({ type: 'ack', fsn: 9n })
    expect(decodeServerMessage(encodeAck(9n, true))).toEqual({ type: 'durableAck', fsn: 9n })
    expect(decodeServerMessage(encodeError('HALT', 3n, 'schema mismatch ✓'))).toEqual({
      type: 'error',
      category: 'HALT',
      fsn: 3n,
      message: 'schema mismatch ✓',
    })
  })

  it.each([
    ['an empty message', '', /empty message/],
    ['an unknown type', '7f', /unknown sender message type 0x7f/],
    ['a truncated HELLO', '0100', /shorter than 4/],
    ['a HELLO whose id length disagrees', '01000003 6162', /sender id of 3 bytes/],
    ['a DATA header cut short', '02 0000000000000001', /shorter than 13/],
    ['DATA without frames', '02 0000000000000001 00000000', /no frames/],
    [
      'DATA whose frame overruns the message',
      '02 0000000000000001 00000001 00000005 6162',
      /past the message end/,
    ],
    ['DATA with trailing bytes', '02 0000000000000001 00000001 00000001 61 62', /1 trailing bytes/],
    [
      'DATA ending inside a length',
      '02 0000000000000001 00000002 00000001 61 0000',
      /ends inside frame 2 of 2/,
    ],
  ])('rejects %s from a sender with SF_WIRE_MALFORMED', (_what, input, pattern) => {
    expect(() => decodeClientMessage(bytes(input))).toThrow(pattern)
    try {
      decodeClientMessage(bytes(input))
    } catch (e) {
      expect((e as { code: string }).code).toBe('SF_WIRE_MALFORMED')
    }
  })

  it.each([
    ['an unknown type', '01', /unknown receiver message type 0x01/],
    ['a short ACK', '82 00', /expected 9/],
    ['a long WELCOME', '81 0000100000', /expected 5/],
    ['an unknown error category', '84 03 0000000000000001', /ERROR category 3/],
  ])('rejects %s from a receiver', (_what, input, pattern) => {
    expect(() => decodeServerMessage(bytes(input))).toThrow(pattern)
  })

  it('cuts close reasons to 123 bytes without splitting a character', () => {
    expect(closeReason('short')).toBe('short')
    const cut = closeReason('é'.repeat(100))
    expect(Buffer.byteLength(cut)).toBe(122)
    expect(cut).toBe('é'.repeat(61))
  })

  it('refuses a sender id that does not fit the u16-prefixed field limits', () => {
    expect(() => encodeHello('', false)).toThrow(/1\.\.255 bytes/)
    expect(() => encodeHello('x'.repeat(256), false)).toThrow(/got 256/)
  })
})
