export { DynamoDbBackend, type DynamoDbBackendOptions } from './dynamodb-backend.js'
export {
  DYNAMODB_ACCESS_DENIED,
  DYNAMODB_BAD_ITEM,
  DYNAMODB_CONFIG_INVALID,
  DYNAMODB_ITEM_TOO_LARGE,
  DYNAMODB_REQUEST_REFUSED,
  DYNAMODB_TABLE_MISMATCH,
  DYNAMODB_TABLE_MISSING,
  DYNAMODB_UNAVAILABLE,
  DynamoDbStateError,
  ItemTooLargeError,
  TableMissingError,
  type TableRef,
} from './errors.js'
export { dynamoDbStore, dynamoDbStore as stateStore } from './store-type.js'
export { openTable } from './table.js'
