export { isLocalOrIp, type S3Settings, s3ClientConfig } from './client-config.js'
export { isCredentialsRefused, isTransientStatus, messageOf, nameOf, statusOf } from './service-error.js'
