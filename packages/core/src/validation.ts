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

/** Returns `{field: key}` for every invalid field (empty when valid). */
export function fieldErrors(schema: TObject, data: unknown): Record<string, string> {
  const validate = validatorFor(schema);
  if (validate(data)) return {};
  const fields: Record<string, string> = {};
  for (const err of validate.errors ?? []) {
    if (err.keyword === 'additionalProperties') continue;
    const prop = topProperty(err);
    if (prop === undefined) {
      fields.body = 'body_invalid';
      continue;
    }
    const propSchema = (schema.properties as Record<string, { 'x-error'?: string }>)[prop];
    fields[prop] ??= propSchema?.['x-error'] ?? `${prop}_invalid`;
  }
  return fields;
}

/** Validates and returns the typed value, or throws 400 `validation` with `fields`. */
export function parseOrThrow<T extends TObject>(schema: T, data: unknown): Static<T> {
  const fields = fieldErrors(schema, data);
  if (Object.keys(fields).length > 0) throw HarkError.validation(fields);
  return data as Static<T>;
}
