// The raw limit of landing objects: a bare Node process that uploads the objects skipprd's sink
// wrote (captured as files by object-stores.ts), one after another, each in one request of the
// service's own client, at the same keys under another prefix: S3 PutObject (@aws-sdk/client-s3),
// Azure Put Blob (@azure/storage-blob's upload), SFTP fastPut (ssh2-sftp-client; its `put` keeps one
// write in flight and waits a round trip per piece, fastPut keeps 64). No encoding, no checksum, no
// create-once condition, no WAL: what skipprd adds to this is its own cost.
// Plain JavaScript, so no loader's start-up is counted.
// Usage: SKIPPR_BENCH_PUT_TARGET=<json> node lib/object-put.mjs <objects.json> <prefix>
//   objects.json: [{ "key": "rentals/…-0.jsonl", "file": "/…/0.bin" }, …]
import { readFile } from 'node:fs/promises'
import { posix } from 'node:path'

const [listFile, prefix] = process.argv.slice(2)
const target = JSON.parse(process.env.SKIPPR_BENCH_PUT_TARGET ?? '{}')
const objects = JSON.parse(await readFile(listFile, 'utf8'))

const uploader = await open(target)
try {
  for (const { key, file } of objects) await uploader.put(`${prefix}/${key}`, file)
} finally {
  await uploader.close()
}

async function open(target) {
  if (target.kind === 's3') {
    const { PutObjectCommand, S3Client } = await import('@aws-sdk/client-s3')
    const client = new S3Client({
      endpoint: target.endpoint,
      region: target.region,
      credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
      forcePathStyle: true,
      // As the sink's client: the checksums the SDK adds by default cost CPU and some servers refuse them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
    })
    return {
      put: async (key, file) =>
        client.send(new PutObjectCommand({ Bucket: target.bucket, Key: key, Body: await readFile(file) })),
      close: async () => client.destroy(),
    }
  }
  if (target.kind === 'azure-blob') {
    const { BlobServiceClient } = await import('@azure/storage-blob')
    const container = BlobServiceClient.fromConnectionString(target.connectionString).getContainerClient(
      target.container,
    )
    return {
      put: async (key, file) => {
        const body = await readFile(file)
        await container.getBlockBlobClient(key).upload(body, body.length)
      },
      close: async () => {},
    }
  }
  if (target.kind === 'sftp') {
    const { default: SftpClient } = await import('ssh2-sftp-client')
    const client = new SftpClient()
    await client.connect({
      host: target.host,
      port: target.port,
      username: target.username,
      privateKey: target.privateKey,
    })
    const made = new Set()
    return {
      async put(key, file) {
        const dir = posix.dirname(posix.join(target.root, key))
        if (!made.has(dir)) {
          await client.mkdir(dir, true)
          made.add(dir)
        }
        await client.fastPut(file, posix.join(target.root, key))
      },
      close: () => client.end(),
    }
  }
  throw new Error(`object-put: unknown target kind ${target.kind}: set SKIPPR_BENCH_PUT_TARGET`)
}
