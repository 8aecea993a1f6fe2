import { startDynalite } from '@skippr/test-servers'
import { storeCases } from './store-cases.js'

storeCases({ name: 'dynalite', start: startDynalite, checksCredentials: false })
