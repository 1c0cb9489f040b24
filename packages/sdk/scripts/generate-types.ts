// Writes the SDK's response types from the OpenAPI document (docs/openapi.json): every
// `components.schemas` entry becomes an exported interface or type alias with its descriptions as doc
// comments, plus the error code union of the error envelope, each code documented with its status and
// meaning from the error responses. Run by `pnpm openapi` (scripts/openapi.mjs); checked by
// src/generated/api-types.spec.ts. A small JSON Schema -> TypeScript translation of the keywords the
// document uses: an unknown keyword fails the generation instead of being typed loosely.

/** Where the generated file lies, relative to the repository root. */
export const API_TYPES_PATH = 'packages/sdk/src/generated/api-types.ts';

const PRINT_WIDTH = 110; // .prettierrc

type Schema = Record<string, unknown>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, Schema> }>>;
  components: { schemas: Record<string, Schema>; responses?: Record<string, Schema> };
}

export interface NamedType {
  name: string;
  /** JSON pointer to the inline schema in the document. */
  pointer: string;
  /** Doc comment when the schema has no description. */
  doc?: string;
  /** An enum of `error.code`: each member is documented with its status and meaning. */
  errorCodes?: boolean;
}

/**
 * Inline schemas that get a name of their own (the SDK exported them by these names before its types
 * were generated). Any other inline schema equal to one of these (descriptions aside) is written as
 * the name too, e.g. `Transcript.status` as `TranscriptStatus`.
 */
export const NAMED: NamedType[] = [
  { name: 'TranscriptStatus', pointer: '/components/schemas/TranscriptListItem/properties/status' },
  {
    name: 'TranscriptFailureCode',
    pointer: '/components/schemas/TranscriptFailure/properties/code',
    doc: '`error.code` of a `failed` transcript.',
  },
  {
    name: 'ErrorCode',
    pointer: '/components/schemas/Error/properties/error/properties/code',
    errorCodes: true,
  },
  { name: 'RateLimitRule', pointer: '/components/schemas/Limits/properties/rateLimits/items' },
];

/** Component names that would shadow a global. */
const RENAMED: Record<string, string> = { Error: 'ErrorEnvelope' };

/** Validation keywords with no TypeScript counterpart. */
const IGNORED = new Set([
  'description',
  'format',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'maxProperties',
  'propertyNames',
  'default',
  'contentMediaType',
  'x-error',
]);

/**
 * The schemas the SDK returns (`data` of its calls) and the error envelope; the schemas they refer to
 * come along. The rest of the document (the OpenAI-compatible routes, health checks, request bodies)
 * is not the SDK's.
 */
export const ROOTS = [
  'Transcript',
  'TranscriptList',
  'DeletedTranscript',
  'Upload',
  'Balance',
  'Limits',
  'WebhookDelivery',
  'Error',
];

/** Derived -> base: the derived schema's properties include every property of the base, as is. */
export const EXTENDS: Record<string, string> = { Transcript: 'TranscriptListItem' };

export interface GenerateOptions {
  roots?: string[];
  names?: NamedType[];
  extend?: Record<string, string>;
}

export function generateApiTypes(
  doc: OpenApiDocument,
  { roots = ROOTS, names = NAMED, extend = EXTENDS }: GenerateOptions = {},
): string {
  const named = names.map((n) => {
    const schema = resolvePointer(doc, n.pointer);
    return { ...n, schema, key: canonical(schema) };
  });
  const codeDocs = errorCodeDocs(doc);

  const ctx: Context = {
    nameOf(schema, self) {
      if (schema === self) return undefined;
      return named.find((n) => n.key === canonical(schema))?.name;
    },
  };

  const out: string[] = [
    '// Generated from docs/openapi.json by packages/sdk/scripts/generate-types.ts: do not edit, run',
    '// `pnpm openapi` (it writes the document and this file).',
  ];
  for (const n of named) {
    const description = docOf(n.schema) ?? n.doc;
    const body = n.errorCodes
      ? unionOf(enumValues(n.schema), (value) => codeDocs.get(value), '')
      : typeOf(n.schema, '', { ...ctx, self: n.schema });
    out.push('', ...docComment(description, ''), declare(n.name, body, n.schema));
  }
  for (const name of reachable(doc, roots)) {
    const schema = doc.components.schemas[name]!;
    const typeName = RENAMED[name] ?? name;
    const base = extend[name];
    const declaration = base
      ? declare(
          `${typeName} extends ${RENAMED[base] ?? base}`,
          typeOf(ownPart(doc, name, base), '', ctx),
          schema,
        )
      : declare(typeName, typeOf(schema, '', ctx), schema);
    out.push('', ...docComment(docOf(schema), ''), declaration);
  }
  return out.join('\n') + '\n';
}

/** `roots` and every component they refer to, directly or not, in the document's order. */
function reachable(doc: OpenApiDocument, roots: string[]): string[] {
  const found = new Set<string>();
  const visit = (name: string) => {
    if (found.has(name)) return;
    const schema = doc.components.schemas[name];
    if (!schema) throw new Error(`generate-types: no schema ${name} in the document`);
    found.add(name);
    for (const [, ref] of JSON.stringify(schema).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      visit(ref!);
    }
  };
  roots.forEach(visit);
  return Object.keys(doc.components.schemas).filter((name) => found.has(name));
}

/** The properties of `name` that `base` lacks; fails unless `base`'s are all in `name` as they are. */
function ownPart(doc: OpenApiDocument, name: string, base: string): Schema {
  const schema = doc.components.schemas[name]!;
  const baseSchema = doc.components.schemas[base];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const baseRequired = new Set((baseSchema?.required as string[] | undefined) ?? []);
  const inherited = Object.entries((baseSchema?.properties ?? {}) as Record<string, Schema>);
  for (const [key, property] of inherited) {
    if (
      JSON.stringify(properties[key]) !== JSON.stringify(property) ||
      required.has(key) !== baseRequired.has(key)
    ) {
      throw new Error(`generate-types: ${name} cannot extend ${base}: \`${key}\` differs`);
    }
  }
  const own = Object.entries(properties).filter(([key]) => !inherited.some(([k]) => k === key));
  return {
    ...schema,
    properties: Object.fromEntries(own),
    required: [...required].filter((key) => own.some(([k]) => k === key)),
  };
}

interface Context {
  /** The name of a `NAMED` schema equal to `schema`, unless `schema` is `self` (being declared). */
  nameOf(schema: Schema, self?: Schema): string | undefined;
  self?: Schema;
}

function declare(name: string, body: string, schema: Schema): string {
  if (body.startsWith('{') && schema.type === 'object') return `export interface ${name} ${body}`;
  if (body.startsWith('\n')) return `export type ${name} =${body};`;
  const line = `export type ${name} = ${body};`;
  if (line.length <= PRINT_WIDTH || !isTopLevelUnion(body)) return line;
  return `export type ${name} =${breakUnion(body, '  ')};`;
}

/** The TypeScript type of `schema`; multi-line object literals are indented from `indent`. */
function typeOf(schema: Schema, indent: string, ctx: Context): string {
  const name = ctx.nameOf(schema, ctx.self);
  if (name) return name;
  const inner: Context = { nameOf: ctx.nameOf };
  for (const key of Object.keys(schema)) {
    if (IGNORED.has(key)) continue;
    if (
      ![
        '$ref',
        'anyOf',
        'const',
        'enum',
        'type',
        'items',
        'properties',
        'required',
        'patternProperties',
        'additionalProperties',
      ].includes(key)
    ) {
      throw new Error(`generate-types: unsupported keyword \`${key}\` in ${JSON.stringify(schema)}`);
    }
  }
  if (typeof schema.$ref === 'string') {
    const component = schema.$ref.replace('#/components/schemas/', '');
    return RENAMED[component] ?? component;
  }
  if (Array.isArray(schema.anyOf)) {
    return (schema.anyOf as Schema[]).map((s) => parenthesize(typeOf(s, indent, inner))).join(' | ');
  }
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return enumValues(schema).map(literal).join(' | ');
  if (Array.isArray(schema.type)) {
    return (schema.type as string[]).map((t) => typeOf({ ...schema, type: t }, indent, inner)).join(' | ');
  }
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${parenthesize(typeOf(schema.items as Schema, indent, inner))}[]`;
    case 'object':
      return objectType(schema, indent, inner);
    default:
      throw new Error(`generate-types: unsupported type in ${JSON.stringify(schema)}`);
  }
}

function objectType(schema: Schema, indent: string, ctx: Context): string {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) {
    const values = Object.values((schema.patternProperties as Record<string, Schema> | undefined) ?? {});
    if (typeof schema.additionalProperties === 'object') values.push(schema.additionalProperties as Schema);
    const value = values.length ? values.map((v) => typeOf(v, indent, ctx)).join(' | ') : 'unknown';
    return `Record<string, ${value}>`;
  }
  if (schema.patternProperties || typeof schema.additionalProperties === 'object') {
    throw new Error(`generate-types: properties with extra properties in ${JSON.stringify(schema)}`);
  }
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const memberIndent = indent + '  ';
  const lines = ['{'];
  for (const [key, property] of Object.entries(properties)) {
    lines.push(...docComment(docOf(property), memberIndent));
    const head = `${memberIndent}${propertyName(key)}${required.has(key) ? '' : '?'}:`;
    const type = typeOf(property, memberIndent, ctx);
    const line = `${head} ${type};`;
    lines.push(
      line.length > PRINT_WIDTH && isTopLevelUnion(type)
        ? `${head}${breakUnion(type, memberIndent + '  ')};`
        : line,
    );
  }
  lines.push(`${indent}}`);
  return lines.join('\n');
}

/** A union with one member a line, as prettier writes a long one, each member after its doc comment. */
function unionOf(values: unknown[], docFor: (value: unknown) => string | undefined, indent: string): string {
  const memberIndent = indent + '  ';
  return values
    .map((value) => [...docComment(docFor(value), memberIndent), `${memberIndent}| ${literal(value)}`])
    .map((lines) => '\n' + lines.join('\n'))
    .join('');
}

function breakUnion(type: string, memberIndent: string): string {
  return splitUnion(type)
    .map((member) => `\n${memberIndent}| ${member}`)
    .join('');
}

/** `A | B` at the top level (not inside brackets, parentheses, strings or object literals). */
function splitUnion(type: string): string[] {
  const members: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if ('{[(<'.includes(c)) depth++;
    else if ('}])>'.includes(c)) depth--;
    else if (depth === 0 && type.startsWith(' | ', i)) {
      members.push(type.slice(start, i));
      start = i + 3;
      i += 2;
    }
  }
  members.push(type.slice(start));
  return members;
}

function isTopLevelUnion(type: string): boolean {
  return splitUnion(type).length > 1;
}

function parenthesize(type: string): string {
  return isTopLevelUnion(type) ? `(${type})` : type;
}

function enumValues(schema: Schema): unknown[] {
  if (!Array.isArray(schema.enum)) throw new Error(`generate-types: no enum in ${JSON.stringify(schema)}`);
  return schema.enum as unknown[];
}

function literal(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  throw new Error(`generate-types: unsupported literal ${JSON.stringify(value)}`);
}

function propertyName(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : literal(key);
}

/** A schema's description; a date-time string without one is documented as ISO 8601. */
function docOf(schema: Schema): string | undefined {
  if (typeof schema.description === 'string') return schema.description;
  if (schema.format === 'date-time') return 'ISO 8601 date and time.';
  return undefined;
}

function docComment(text: string | undefined, indent: string): string[] {
  if (!text) return [];
  const lines = text.replace(/\*\//g, '*\\/').split('\n');
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [
    `${indent}/**`,
    ...lines.map((line) => (line ? `${indent} * ${line}` : `${indent} *`)),
    `${indent} */`,
  ];
}

/**
 * `error.code` -> its status and meaning, from the error responses: each one narrows the envelope's
 * code to an enum and explains each code in a `` - `code`: meaning `` line of its description.
 */
function errorCodeDocs(doc: OpenApiDocument): Map<unknown, string> {
  const seen = new Map<string, Map<string, Set<string>>>(); // code -> status -> meanings
  const visit = (status: string, response: Schema) => {
    const ref = response.$ref as string | undefined;
    const resolved = ref ? resolvePointer(doc, ref.slice(1)) : response;
    const content = resolved.content as Record<string, { schema?: Schema }> | undefined;
    const allOf = content?.['application/json']?.schema?.allOf as Schema[] | undefined;
    const narrowed = allOf?.[1] as
      | { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } }
      | undefined;
    const codes = narrowed?.properties?.error?.properties?.code?.enum ?? [];
    const meanings = new Map<string, string>();
    const description = typeof resolved.description === 'string' ? resolved.description : '';
    for (const line of description.split('\n')) {
      const m = /^- `([a-z0-9_]+)`: (.+)$/.exec(line);
      if (m && !meanings.has(m[1]!)) meanings.set(m[1]!, m[2]!);
    }
    for (const code of codes) {
      const byStatus = seen.get(code) ?? new Map<string, Set<string>>();
      seen.set(code, byStatus);
      const set = byStatus.get(status) ?? new Set<string>();
      byStatus.set(status, set);
      const meaning = meanings.get(code);
      if (meaning) set.add(meaning);
    }
  };
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) visit(status, response);
    }
  }
  const docs = new Map<unknown, string>();
  for (const [code, byStatus] of seen) {
    const lines: string[] = [];
    for (const [status, meanings] of byStatus) {
      lines.push(
        meanings.size ? [...meanings].map((m) => `${status}: ${sentence(m)}`).join('\n') : `${status}.`,
      );
    }
    docs.set(code, lines.join('\n'));
  }
  return docs;
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function resolvePointer(doc: unknown, pointer: string): Schema {
  const target = pointer
    .slice(1)
    .split('/')
    .reduce<unknown>(
      (acc, seg) =>
        (acc as Record<string, unknown> | undefined)?.[seg.replace(/~1/g, '/').replace(/~0/g, '~')],
      doc,
    );
  if (!target || typeof target !== 'object') throw new Error(`generate-types: nothing at ${pointer}`);
  return target as Schema;
}

/** A schema's JSON without descriptions, keys sorted: equal for schemas that type the same. */
function canonical(schema: unknown): string {
  return JSON.stringify(schema, (key, value: unknown) => {
    if (key === 'description') return undefined;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return value;
  });
}
