import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_TYPES_PATH, generateApiTypes } from '../../scripts/generate-types';
import type { CreateTranscriptParams } from '../types';

const ROOT = path.resolve(__dirname, '../../../..');

type Document = Parameters<typeof generateApiTypes>[0];
type Schema = Document['components']['schemas'][string];
const documentWith = (
  schemas: Document['components']['schemas'],
  paths: Document['paths'] = {},
): Document => ({
  paths,
  components: { schemas },
});

const readDocument = () => JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8')) as Document;

// The request parameters stay hand-written (the request body is not generated): every one of them,
// listed once here (the type makes the list complete), must be a field of the documented body.
const CREATE_PARAMS: Record<keyof CreateTranscriptParams, true> = {
  url: true,
  uploadId: true,
  language: true,
  speakers: true,
  webhookUrl: true,
  glossary: true,
  externalId: true,
  metadata: true,
  retentionDays: true,
  reuseIfIdentical: true,
};

describe('generated API types', () => {
  it('src/generated/api-types.ts is generated from docs/openapi.json (run `pnpm openapi` when this fails)', () => {
    const doc = readDocument();
    const committed = readFileSync(path.join(ROOT, API_TYPES_PATH), 'utf8');
    if (committed !== generateApiTypes(doc)) {
      throw new Error(`${API_TYPES_PATH} is stale: run \`pnpm openapi\` and commit the result`);
    }
  });

  it('CreateTranscriptParams has exactly the fields of the documented request body', () => {
    const body = readDocument().components.schemas.CreateTranscriptRequest?.properties ?? {};
    expect(Object.keys(CREATE_PARAMS).sort()).toEqual(Object.keys(body).sort());
  });

  it('writes objects as interfaces: required, optional, nullable, enums, maps, arrays, nested objects', () => {
    const text = generateApiTypes(
      documentWith({
        Thing: {
          type: 'object',
          description: 'A thing.',
          required: ['id', 'kind', 'tags', 'note', 'size'],
          properties: {
            id: { type: 'string', minLength: 1, 'x-error': 'id_invalid' },
            kind: { type: 'string', enum: ['a', "b'c"], description: 'Which one.' },
            tags: { type: 'object', patternProperties: { '^(.*)$': { type: 'string' } } },
            note: { anyOf: [{ type: 'array', items: { type: ['string', 'null'] } }, { type: 'null' }] },
            size: { type: 'object', required: ['bytes'], properties: { bytes: { type: 'integer' } } },
            'odd-name': { const: true, type: 'boolean' },
            at: { type: 'string', format: 'date-time' },
            other: { $ref: '#/components/schemas/Part' },
          },
        },
        Part: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } },
        Unused: { type: 'object', properties: { x: { type: 'string' } } },
      }),
      { roots: ['Thing'], names: [] },
    );
    expect(text.split('\n').slice(3).join('\n')).toBe(
      [
        '/** A thing. */',
        'export interface Thing {',
        '  id: string;',
        '  /** Which one. */',
        "  kind: 'a' | 'b\\'c';",
        '  tags: Record<string, string>;',
        '  note: (string | null)[] | null;',
        '  size: {',
        '    bytes: number;',
        '  };',
        "  'odd-name'?: true;",
        '  /** ISO 8601 date and time. */',
        '  at?: string;',
        '  other?: Part;',
        '}',
        '',
        'export interface Part {',
        '  n: number;',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('names inline schemas, and documents error codes with the status and meaning of their responses', () => {
    const envelope = (codes: string[]) => ({
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Error' },
              {
                type: 'object',
                properties: { error: { type: 'object', properties: { code: { enum: codes } } } },
              },
            ],
          },
        },
      },
    });
    const code = { type: 'string', enum: ['gone', 'busy'] };
    const text = generateApiTypes(
      documentWith(
        {
          Error: { type: 'object', required: ['code'], properties: { code } },
          Other: { type: 'object', required: ['why'], properties: { why: { ...code, description: 'Why.' } } },
        },
        {
          '/a': {
            get: { responses: { '404': { description: '- `gone`: no such thing', ...envelope(['gone']) } } },
            put: {
              responses: {
                '404': {
                  description: '- `gone`: deleted\n\nValidation keys:\n- `busy`: `x`',
                  ...envelope(['gone']),
                },
                '409': { description: '- `busy`: try again.', ...envelope(['busy']) },
              },
            },
          },
        },
      ),
      {
        roots: ['Error', 'Other'],
        names: [
          {
            name: 'Code',
            pointer: '/components/schemas/Error/properties/code',
            doc: 'A code.',
            errorCodes: true,
          },
        ],
      },
    );
    expect(text.split('\n').slice(3).join('\n')).toBe(
      [
        '/** A code. */',
        'export type Code =',
        '  /**',
        '   * 404: no such thing.',
        '   * 404: deleted.',
        '   */',
        "  | 'gone'",
        '  /** 409: try again. */',
        "  | 'busy';",
        '',
        'export interface ErrorEnvelope {',
        '  code: Code;',
        '}',
        '',
        'export interface Other {',
        '  /** Why. */',
        '  why: Code;',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('writes a schema that repeats all of another as an extension of it, and checks that it does', () => {
    const base = {
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'string', description: 'Id.' } },
    };
    const wider = (id: Schema) => ({
      type: 'object',
      required: ['id', 'more'],
      properties: { id, more: { type: 'integer' } },
    });
    const generate = (id: Schema) =>
      generateApiTypes(documentWith({ Base: base, Wider: wider(id) }), {
        roots: ['Base', 'Wider'],
        names: [],
        extend: { Wider: 'Base' },
      });
    expect(generate({ type: 'string', description: 'Id.' })).toContain(
      ['export interface Wider extends Base {', '  more: number;', '}'].join('\n'),
    );
    expect(() => generate({ type: 'string', description: 'Other id.' })).toThrow(
      'Wider cannot extend Base: `id` differs',
    );
  });

  it('refuses a keyword it cannot translate rather than typing it loosely', () => {
    expect(() =>
      generateApiTypes(documentWith({ Odd: { oneOf: [{ type: 'string' }] } }), { roots: ['Odd'], names: [] }),
    ).toThrow('unsupported keyword `oneOf`');
  });
});
