/** One scrape of a sync's /metrics: `name{labels}` (labels sorted by name) → value. */
export async function scrape(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    const [, name = '', labels] = /^([^{]+)(?:\{(.*)\})?$/.exec(line.slice(0, at)) ?? []
    const sorted = labels === undefined ? '' : `{${labels.split(',').sort().join(',')}}`
    samples.set(`${name}${sorted}`, Number(line.slice(at + 1)))
  }
  return samples
}
