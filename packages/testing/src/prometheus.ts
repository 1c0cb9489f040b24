/**
 * The value of one sample in Prometheus' text exposition format, matched on its exact label
 * set (order free); undefined when absent. `labels` {} matches a sample without labels.
 */
export function metricSample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(',').sort() : [];
    if (have.length === wanted.length && have.every((l, i) => l === wanted[i])) return Number(m[3]);
  }
  return undefined;
}

/** GET `<base>/metrics` and its text; throws unless 200. */
export async function scrapeMetrics(base: string, token?: string): Promise<string> {
  const res = await fetch(`${base}/metrics`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  if (res.status !== 200) throw new Error(`GET ${base}/metrics: ${res.status}`);
  return res.text();
}
