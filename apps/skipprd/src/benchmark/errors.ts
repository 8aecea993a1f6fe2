import { SkipprError } from '@skippr/connector-api'

export const BENCHMARK_STOPPED = 'SKIPPR_BENCHMARK_STOPPED'

/** SIGINT or SIGTERM during a benchmark: it ends after the load in progress, once it has cleaned up. */
export class BenchmarkStoppedError extends SkipprError {
  constructor(signal: string) {
    super(BENCHMARK_STOPPED, `stopped by ${signal}`)
  }
}
