/**
 * Form bodies (urlencoded and multipart) carry strings only. This turns them into the same
 * typed fields a JSON body carries, so one schema validates both and the same request sent
 * either way is the same parsed body (which is what idempotency compares).
 */
const BOOLEAN_FIELDS = new Set(['reuseIfIdentical']);
const INTEGER_FIELDS = new Set(['retentionDays']);
const OBJECT_FIELDS = new Set(['glossary', 'metadata']);

function toBoolean(v: string): boolean | string {
  return v === 'true' ? true : v === 'false' ? false : v;
}

export function normaliseFormBody(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (typeof value !== 'string') {
      out[key] = value; // nested bracket syntax (glossary[word]=...) is already an object
      continue;
    }
    if (BOOLEAN_FIELDS.has(key)) out[key] = toBoolean(value);
    else if (INTEGER_FIELDS.has(key)) out[key] = /^-?\d{1,9}$/.test(value) ? Number(value) : value;
    else if (key === 'speakers') out[key] = /^\d{1,9}$/.test(value) ? Number(value) : toBoolean(value);
    else if (OBJECT_FIELDS.has(key)) out[key] = parseJsonObject(value);
    else out[key] = value;
  }
  return out;
}

function parseJsonObject(v: string): unknown {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v; // fails validation with the field's own key
  }
}
