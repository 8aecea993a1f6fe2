/** One metric as prom-client's registry serialises it, its samples computed at each scrape. */

export type Labels = Record<string, string>

export interface Sample {
  readonly value: number
  readonly labels: Labels
  readonly metricName?: string
}

export function view(
  name: string,
  help: string,
  type: 'counter' | 'gauge' | 'histogram',
  samples: () => Sample[],
) {
  return {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: async () => ({ name, help, type, aggregator: 'sum' as const, values: samples() }),
  }
}
