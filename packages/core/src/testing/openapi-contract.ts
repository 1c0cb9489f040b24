import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Checks responses against an OpenAPI 3.1 document: the operation is found from method and
 * path, the status must be documented for it, the content type must be one of that response's,
 * its required headers must be present and a JSON body must match its schema. Requests matching
 * no operation must still answer with the error envelope. Used by the API's opt-in response
 * validator (HARK_VALIDATE_RESPONSES=1, tests only) so the test suite is a contract test.
 */
type Json = Record<string, unknown>;

export interface ObservedResponse {
  method: string;
  /** Path without the query string. */
  path: string;
  status: number;
  headers: Record<string, unknown>;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body?: unknown;
}

export interface ContractViolation {
  method: string;
  path: string;
  status: number;
  /** `METHOD /template` of the matched operation, or null when none matched. */
  operation: string | null;
  problems: string[];
}

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  pointer: string;
  responses: Json;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

function mediaType(header: unknown): string | null {
  if (typeof header !== 'string') return null;
  return header.split(';')[0]!.trim().toLowerCase();
}

export class OpenApiContract {
  private readonly ajv: Ajv2020;
  private readonly routes: Route[];
  private readonly compiled = new Map<string, ValidateFunction>();
  private static readonly ID = 'urn:hark:openapi';

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: OpenApiContract.ID });
    const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
    this.routes = [];
    for (const [template, item] of Object.entries(paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        this.routes.push({
          method: method.toUpperCase(),
          template,
          pattern: templatePattern(template),
          pointer: `#/paths/${escapePointer(template)}/${method}`,
          responses: (op.responses ?? {}) as Json,
        });
      }
    }
    // Literal segments win over templated ones (`/a/b` before `/a/{id}`).
    this.routes.sort(
      (a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0),
    );
  }

  /** Whether any operation of the document has this path (whatever the method). */
  documents(path: string): boolean {
    return this.routes.some((x) => x.pattern.test(path));
  }

  /** Problems with one response; empty when it conforms. */
  check(r: ObservedResponse): ContractViolation | null {
    const route = this.routes.find((x) => x.method === r.method.toUpperCase() && x.pattern.test(r.path));
    const problems = route ? this.checkOperation(route, r) : this.checkUndocumented(r);
    return problems.length === 0
      ? null
      : {
          method: r.method,
          path: r.path,
          status: r.status,
          operation: route ? `${route.method} ${route.template}` : null,
          problems,
        };
  }

  private checkOperation(route: Route, r: ObservedResponse): string[] {
    const key = [String(r.status), `${String(r.status)[0]}XX`, 'default'].find((k) => k in route.responses);
    if (key === undefined) {
      return [
        `status ${r.status} is not documented (documented: ${Object.keys(route.responses).join(', ')})`,
      ];
    }
    const pointer = `${route.pointer}/responses/${key}`;
    const response = this.resolve(route.responses[key] as Json, pointer);
    const problems: string[] = [];
    for (const [name, raw] of Object.entries((response.value.headers ?? {}) as Json)) {
      const header = this.resolve(raw as Json, `${response.pointer}/headers/${escapePointer(name)}`).value;
      if (header.required === true && r.headers[name.toLowerCase()] === undefined) {
        problems.push(`required header ${name} is missing`);
      }
    }
    const content = (response.value.content ?? {}) as Json;
    const types = Object.keys(content);
    const type = mediaType(r.headers['content-type']);
    if (types.length === 0) {
      if (r.body !== undefined) problems.push('a body was sent where none is documented');
      return problems;
    }
    const documented = types.find((t) => mediaType(t) === type);
    if (!documented) {
      problems.push(`content type ${type ?? '(none)'} is not documented (documented: ${types.join(', ')})`);
      return problems;
    }
    if (type === 'application/json' && r.body !== undefined) {
      const at = `${response.pointer}/content/${escapePointer(documented)}/schema`;
      problems.push(...this.validate(at, r.body));
    }
    return problems;
  }

  /** Unknown routes and methods: 404 `not_found` (or 401/429/500 before routing) in the envelope. */
  private checkUndocumented(r: ObservedResponse): string[] {
    const problems: string[] = [];
    if (![401, 404, 429, 500].includes(r.status)) {
      problems.push(
        `status ${r.status} on an undocumented operation (only 401, 404, 429 or 500 may answer one)`,
      );
    }
    if (r.body === undefined) problems.push('no JSON error envelope');
    else problems.push(...this.validate('#/components/schemas/Error', r.body));
    return problems;
  }

  /** Follows a `$ref` to a response or header component; returns it and the pointer it lives at. */
  private resolve(node: Json, pointer: string): { value: Json; pointer: string } {
    const ref = node.$ref;
    if (typeof ref !== 'string') return { value: node, pointer };
    const value = ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((acc, seg) => (acc as Json | undefined)?.[seg], this.doc);
    if (!value || typeof value !== 'object') throw new Error(`unresolvable $ref ${ref}`);
    return { value: value as Json, pointer: ref };
  }

  private validate(pointer: string, body: unknown): string[] {
    let v = this.compiled.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `${OpenApiContract.ID}${pointer}` });
      this.compiled.set(pointer, v);
    }
    if (v(body)) return [];
    return (v.errors ?? [])
      .slice(0, 10)
      .map(
        (e) =>
          `body${e.instancePath || ''} ${e.message ?? 'is invalid'}${
            e.keyword === 'additionalProperties'
              ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
              : ''
          }${e.keyword === 'enum' ? ` (${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)})` : ''}`,
      );
  }
}

// Violations are kept on a process-wide registry (a global symbol, so the copy of this module
// the app loaded and the one a jest hook loads share it): the test that caused one fails.
const REGISTRY = Symbol.for('hark.contractViolations');

function registry(): ContractViolation[] {
  const g = globalThis as { [REGISTRY]?: ContractViolation[] };
  return (g[REGISTRY] ??= []);
}

export function recordContractViolation(v: ContractViolation): void {
  registry().push(v);
}

/** Returns and clears the violations recorded so far. */
export function takeContractViolations(): ContractViolation[] {
  return registry().splice(0);
}

export function formatContractViolation(v: ContractViolation): string {
  return `${v.method} ${v.path} -> ${v.status} (${v.operation ?? 'no documented operation'}): ${v.problems.join('; ')}`;
}
