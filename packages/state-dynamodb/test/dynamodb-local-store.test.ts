import { startDynamoDbLocal } from '@skippr/test-servers'
import { storeCases } from './store-cases.js'

storeCases({ name: 'DynamoDB Local', start: startDynamoDbLocal, checksCredentials: true })
