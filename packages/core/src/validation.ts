import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TObject } from '@sinclair/typebox';
import { HarkError } from './errors';

/**
 * JSON Schema validation that reports the spec's stable keys. Each top-level property schema
 * names its key with the `x-error` annotation; every failure under that property (type, range,
 * nested entries) reports that one key, so `fields` is `{property: key}`.
 */
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true });
addFormats(ajv);
ajv.addKeyword({ keyword: 'x-error', schemaType: 'string' });

const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();

function validatorFor(schema: TObject) {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

function topProperty(err: ErrorObject): string | undefined {
  if (err.keyword === 'required') return (err.params as { missingProperty: string }).missingProperty;
  const seg = err.instancePath.split('/')[1];
  return seg === undefined || seg === '' ? undefined : seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

const errorKey = (schema: TObject, prop: string): string =>
  (schema.properties as Record<string, { 'x-error'?: string }>)[prop]?.['x-error'] ?? `${prop}_invalid`;

/**
 * True when a string in `value` (at any depth, object keys included) holds U+0000. Postgres text
 * and jsonb cannot store it (22021, 22P05), so such a value must be refused before any query.
 * Iterative: a deeply nested body cannot exhaust the stack.
 */
export function containsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        stack.push(x);
      }
    }
  }
  return false;
}

/**
 * Returns `{field: key}` for every invalid field (empty when valid). Besides the schema, every
 * declared property refuses a string holding U+0000 anywhere inside it ({@link containsNul}), on
 * every route and body type, so no field has to remember to. Undeclared properties are ignored
 * here as by the schema: nothing stores them.
 */
export function fieldErrors(schema: TObject, data: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    for (const prop of Object.keys(schema.properties)) {
      const v = (data as Record<string, unknown>)[prop];
      if (Object.hasOwn(data, prop) && containsNul(v)) fields[prop] = errorKey(schema, prop);
    }
  }
  const validate = validatorFor(schema);
  if (validate(data)) return fields;
  for (const err of validate.errors ?? []) {
    if (err.keyword === 'additionalProperties') continue;
    const prop = topProperty(err);
    if (prop === undefined) {
      fields.body = 'body_invalid';
      continue;
    }
    fields[prop] ??= errorKey(schema, prop);
  }
  return fields;
}

/**
 * `{field: key}` for query parameters of a declared name written with brackets (`status[]=done`,
 * `status[x]=`, `externalId[contains]=a`): clients send them to mean arrays or objects, which no
 * parameter takes. Express's query parser keeps them as parameters of those names, which
 * validation would ignore as unknown, answering as if the filter had not been sent.
 */
export function bracketedParams(schema: TObject, query: Record<string, unknown>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const key of Object.keys(query)) {
    const base = /^([^[\]]+)\[/.exec(key)?.[1];
    if (base !== undefined && Object.hasOwn(schema.properties, base)) fields[base] = errorKey(schema, base);
  }
  return fields;
}

/**
 * {@link parseOrThrow} for a query string: a parameter sent twice arrives as an array and fails
 * its string schema (never one of the values picked silently), and a bracketed name of a
 * declared parameter is refused ({@link bracketedParams}).
 */
export function parseQueryOrThrow<T extends TObject>(schema: T, query: Record<string, unknown>): Static<T> {
  const fields = { ...bracketedParams(schema, query), ...fieldErrors(schema, query) };
  if (Object.keys(fields).length > 0) throw HarkError.validation(fields);
  return query as Static<T>;
}

/** Validates and returns the typed value, or throws 400 `validation` with `fields`. */
export function parseOrThrow<T extends TObject>(schema: T, data: unknown): Static<T> {
  const fields = fieldErrors(schema, data);
  if (Object.keys(fields).length > 0) throw HarkError.validation(fields);
  return data as Static<T>;
}
