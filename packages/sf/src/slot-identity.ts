/**
 * `.slot-id`: the slot's identity, a random UUID made with the slot and kept in it for as long as the
 * directory exists. FSNs number frames within one slot only: two slots (two applications under one
 * sender id, or a slot deleted and made again) both start at 1, so a receiver tells them apart by this id
 * (the sender announces it in HELLO). It is written once, with temp file + fdatasync + rename + directory
 * fsync, before the slot publishes anything, so every frame ever forwarded went out under the id the
 * directory holds; recovery and reopening keep it, and a deleted and recreated slot gets a new one.
 */
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { SlotCorruptError } from './errors.js'
import { readSmallFile, replaceFileDurably, type SlotFs } from './io.js'

export const SLOT_ID_FILE = '.slot-id'

/** Whether `text` is a slot id: a UUID in lower-case hex, as `randomUUID` writes it. */
export function isSlotId(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(text)
}

/** The slot's id, made now if the directory has none yet (a new slot, or one from an earlier version). */
export async function loadSlotId(io: SlotFs, dir: string): Promise<string> {
  const bytes = await readSmallFile(io, path.join(dir, SLOT_ID_FILE))
  if (bytes !== undefined) {
    const id = bytes.toString('utf8').trim()
    if (!isSlotId(id)) {
      // Never replaced silently: a new id changes how receivers treat this slot's frames.
      throw new SlotCorruptError(
        dir,
        `${SLOT_ID_FILE} does not hold a slot id (${bytes.length} bytes)`,
        `Delete ${SLOT_ID_FILE} to give the slot a new identity (a receiver that knew the old one refuses the new)`,
      )
    }
    return id
  }
  const id = randomUUID()
  await replaceFileDurably(io, dir, SLOT_ID_FILE, Buffer.from(`${id}\n`))
  return id
}
