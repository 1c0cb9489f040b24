import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_TYPES_PATH, generateApiTypes } from '../../scripts/generate-types';
import type { CreateTranscriptParams } from '../types';
import type { CreateTranscriptRequest } from './api-types';

const ROOT = path.resolve(__dirname, '../../../..');

type Document = Parameters<typeof generateApiTypes>[0];
const documentWith = (
  schemas: Document['components']['schemas'],
  paths: Document['paths'] = {},
): Document => ({
  paths,
  components: { schemas },
});

// Compile-time checks (`pnpm typecheck`): the SDK's hand-written create parameters name exactly the
// fields of the documented request body, and each of them fits the field's documented type.
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
const _createKeys: SameKeys<CreateTranscriptParams, CreateTranscriptRequest> = true;
const _createFits = (params: Required<CreateTranscriptParams>): Required<CreateTranscriptRequest> => params;

describe('generated API types', () => {
  it('src/generated/api-types.ts is generated from docs/openapi.json (run `pnpm openapi` when this fails)', () => {
    const doc = JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8')) as Document;
    const committed = readFileSync(path.join(ROOT, API_TYPES_PATH), 'utf8');
    if (committed !== generateApiTypes(doc)) {
      throw new Error(`${API_TYPES_PATH} is stale: run \`pnpm openapi\` and commit the result`);
    }
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
            other: { $ref: '#/components/schemas/Error' },
          },
        },
      }),
      [],
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
        '  other?: ErrorEnvelope;',
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
      [
        {
          name: 'Code',
          pointer: '/components/schemas/Error/properties/code',
          doc: 'A code.',
          errorCodes: true,
        },
      ],
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

  it('refuses a keyword it cannot translate rather than typing it loosely', () => {
    expect(() => generateApiTypes(documentWith({ Odd: { oneOf: [{ type: 'string' }] } }), [])).toThrow(
      'unsupported keyword `oneOf`',
    );
  });
});
