import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb'
import {
  InvalidStateNameError,
  type JsonValue,
  joinStateKey,
  type PutCondition,
  type PutResult,
  type StateBackend,
  type StateEntry,
  type StateItem,
  splitStateKey,
} from '@skippr/state'
import {
  classify,
  DYNAMODB_BAD_ITEM,
  DynamoDbStateError,
  ItemTooLargeError,
  type TableRef,
  tableName,
} from './errors.js'

export interface DynamoDbBackendOptions {
  /** Closed by `close()`. */
  readonly client: DynamoDBClient
  /** The table (which must exist, with the keys `openTable` checks) and its region, for messages. */
  readonly table: TableRef
  /** The first part of every partition key. Default `default`. */
  readonly tenant?: string | undefined
}

type Item = Record<string, AttributeValue>

const DEFAULT_TENANT = 'default'

/**
 * The state contract on one DynamoDB table, one item per key: `PK` = `<tenant>#<workspace>#<pipeline>`,
 * `SK` = `lease` or `state/<record>` (`splitStateKey`), `version` (N) and `value` (S, the JSON
 * text). Every read is strongly consistent, so it sees every write that completed before it.
 */
export class DynamoDbBackend implements StateBackend {
  private readonly client: DynamoDBClient
  private readonly ref: TableRef
  /** URI-encoded, as the state package encodes every name, so `#` only ever separates parts. */
  private readonly tenant: string

  constructor(options: DynamoDbBackendOptions) {
    this.client = options.client
    this.ref = options.table
    const tenant = options.tenant ?? DEFAULT_TENANT
    if (tenant === '') throw new InvalidStateNameError('tenant', tenant)
    this.tenant = encodeURIComponent(tenant)
  }

  async get(key: string): Promise<StateEntry | undefined> {
    const Key = this.keyOf(key)
    const { Item } = await this.call(`reading state key '${key}'`, () =>
      this.client.send(new GetItemCommand({ TableName: this.ref.table, Key, ConsistentRead: true })),
    )
    return Item && this.entryOf(key, Item)
  }

  async put(key: string, value: JsonValue, condition?: PutCondition): Promise<PutResult> {
    const Key = this.keyOf(key)
    const text = JSON.stringify(value)
    try {
      const version = condition ? await this.putIf(Key, text, condition) : await this.update(Key, text)
      return { ok: true, version }
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw this.writeError(error, key, text)
      // DynamoDB and DynamoDB Local return the item that refused the write; dynalite does not.
      return { ok: false, current: error.Item ? this.entryOf(key, error.Item) : await this.get(key) }
    }
  }

  async delete(key: string): Promise<boolean> {
    const Key = this.keyOf(key)
    const { Attributes } = await this.call(`deleting state key '${key}'`, () =>
      this.client.send(new DeleteItemCommand({ TableName: this.ref.table, Key, ReturnValues: 'ALL_OLD' })),
    )
    return Attributes !== undefined
  }

  /** One Query in the prefix's partition (never a Scan), page by page, in sort key order. */
  async list(prefix: string): Promise<StateItem[]> {
    const { partition, sort } = splitStateKey(prefix)
    const items: StateItem[] = []
    let start: Item | undefined
    do {
      const page = await this.call(`listing state keys under '${prefix}'`, () =>
        this.client.send(
          new QueryCommand({
            TableName: this.ref.table,
            KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sort)',
            ExpressionAttributeValues: { ':pk': { S: this.partitionKey(partition) }, ':sort': { S: sort } },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        ),
      )
      for (const item of page.Items ?? []) {
        const key = joinStateKey({ partition, sort: item.SK?.S ?? '' })
        items.push({ key, ...this.entryOf(key, item) })
      }
      start = page.LastEvaluatedKey
    } while (start !== undefined)
    return items
  }

  async close(): Promise<void> {
    this.client.destroy()
  }

  /** A conditional PutItem of version previous + 1. */
  private async putIf(Key: Item, text: string, condition: PutCondition): Promise<number> {
    const expected = 'mustNotExist' in condition ? undefined : condition.expectedVersion
    const version = (expected ?? 0) + 1
    await this.client.send(
      new PutItemCommand({
        TableName: this.ref.table,
        Item: { ...Key, version: { N: String(version) }, value: { S: text } },
        ...(expected === undefined
          ? { ConditionExpression: 'attribute_not_exists(PK)' }
          : {
              ConditionExpression: '#version = :expected',
              ExpressionAttributeNames: { '#version': 'version' },
              ExpressionAttributeValues: { ':expected': { N: String(expected) } },
            }),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    )
    return version
  }

  /**
   * An unconditional put is one UpdateItem that adds 1 to the version on the server (from 0 when the
   * item is new). DynamoDB applies the writes of one item one at a time, so racing puts each get
   * their own version and none is lost; a read-then-write loop would need several round trips and
   * could still give up under contention.
   */
  private async update(Key: Item, text: string): Promise<number> {
    const { Attributes } = await this.client.send(
      new UpdateItemCommand({
        TableName: this.ref.table,
        Key,
        UpdateExpression: 'SET #value = :value ADD #version :one',
        ExpressionAttributeNames: { '#value': 'value', '#version': 'version' },
        ExpressionAttributeValues: { ':value': { S: text }, ':one': { N: '1' } },
        ReturnValues: 'UPDATED_NEW',
      }),
    )
    return Number(Attributes?.version?.N)
  }

  private writeError(error: unknown, key: string, text: string): DynamoDbStateError {
    const { name, message } = error as { name?: string; message?: string }
    // "Item size has exceeded …" (PutItem), "Item size to update has exceeded …" (UpdateItem).
    if (name === 'ValidationException' && /item size .*exceeded/i.test(message ?? '')) {
      return new ItemTooLargeError(this.ref, key, Buffer.byteLength(text), error)
    }
    return classify(error, `writing state key '${key}'`, this.ref)
  }

  private async call<T>(action: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send()
    } catch (error) {
      throw classify(error, action, this.ref)
    }
  }

  private keyOf(key: string): Item {
    const { partition, sort } = splitStateKey(key)
    return { PK: { S: this.partitionKey(partition) }, SK: { S: sort } }
  }

  private partitionKey(partition: string): string {
    return `${this.tenant}#${partition}`
  }

  private entryOf(key: string, item: Item): StateEntry {
    const version = Number(item.version?.N)
    const text = item.value?.S
    if (Number.isSafeInteger(version) && text !== undefined) {
      try {
        return { version, value: JSON.parse(text) as JsonValue }
      } catch {
        // Reported below, with the other kinds of foreign item.
      }
    }
    throw new DynamoDbStateError(
      DYNAMODB_BAD_ITEM,
      `state key '${key}' in ${tableName(this.ref)} is not an item of the state store (it needs a number ` +
        "'version' and a JSON string 'value'); another program wrote it: remove it, or give the state store a table of its own",
      false,
    )
  }
}
