// s3rver's command line with one change: a PUT is atomic, as S3's is. s3rver streams a PUT's body
// straight into the object's file, so a client killed in the middle of one (a chaos run's SIGKILL)
// leaves a torn object that s3rver then lists and serves, which S3 never does: an object there is
// whole or absent. Here the body is read whole first, written to a temporary file, its metadata
// stored, and only then renamed into place; a body that never ends is never stored.
'use strict'
const { createHash, randomUUID } = require('node:crypto')
const { mkdir, rename, rm, writeFile } = require('node:fs/promises')
const { dirname } = require('node:path')
const FilesystemStore = require('s3rver/lib/stores/filesystem.js')

FilesystemStore.prototype.putObject = async function putObject(object) {
  const content = Buffer.isBuffer(object.content) ? object.content : await whole(object.content)
  const md5 = createHash('md5').update(content).digest('hex')
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object')
  const temporary = `${objectPath}.${randomUUID()}.partial`
  await mkdir(dirname(objectPath), { recursive: true })
  try {
    await writeFile(temporary, content)
    await this.putMetadata(object.bucket, object.key, object.metadata, md5)
    await rename(temporary, objectPath)
  } finally {
    await rm(temporary, { force: true })
  }
  return { size: content.length, md5 }
}

/** The stream's bytes once it ended; rejects if it errs or closes first. */
function whole(stream) {
  return new Promise((resolve, reject) => {
    const chunks = []
    let ended = false
    stream.on('data', (chunk) => chunks.push(chunk))
    stream.on('end', () => {
      ended = true
      resolve(Buffer.concat(chunks))
    })
    stream.on('error', reject)
    stream.on('close', () => {
      if (!ended) reject(new Error('the request body ended early: nothing stored'))
    })
  })
}

require('s3rver/bin/s3rver.js')
