import { Type } from '@sinclair/typebox';
import { containsNul, fieldErrors, parseQueryOrThrow } from './validation';

describe('containsNul', () => {
  it.each<[unknown, boolean]>([
    ['plain', false],
    ['a\u0000b', true],
    [{ k: 'v' }, false],
    [{ 'k\u0000': 'v' }, true],
    [{ a: [1, { b: 'x\u0000' }] }, true],
    [[null, true, 3, 'ok'], false],
  ])('%j -> %p', (value, expected) => {
    expect(containsNul(value)).toBe(expected);
  });

  it('walks a deeply nested value without recursion', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(containsNul(deep)).toBe(true);
  });
});

describe('fieldErrors', () => {
  const schema = Type.Object({
    name: Type.Optional(Type.String({ 'x-error': 'name_invalid' })),
    tags: Type.Optional(Type.Record(Type.String(), Type.String(), { 'x-error': 'tags_invalid' })),
    plain: Type.Optional(Type.String()),
  });

  it('refuses U+0000 in any declared property, value or key, under its key', () => {
    expect(fieldErrors(schema, { name: 'a\u0000', tags: { 'k\u0000': 'v' }, plain: '\u0000' })).toEqual({
      name: 'name_invalid',
      tags: 'tags_invalid',
      plain: 'plain_invalid',
    });
  });

  it('ignores undeclared properties, as the schema does', () => {
    expect(fieldErrors(schema, { other: 'a\u0000', name: 'ok' })).toEqual({});
  });
});

describe('parseQueryOrThrow', () => {
  const schema = Type.Object({
    status: Type.Optional(Type.String({ 'x-error': 'status_invalid' })),
    q: Type.Optional(Type.String()),
  });
  const fieldsOf = (query: Record<string, unknown>) => {
    try {
      parseQueryOrThrow(schema, query);
      return {};
    } catch (e) {
      return (e as { fields: Record<string, string> }).fields;
    }
  };

  it('refuses bracketed names of declared parameters and repeated parameters under their key', () => {
    expect(fieldsOf({ 'status[]': 'done' })).toEqual({ status: 'status_invalid' });
    expect(fieldsOf({ 'q[contains]': 'a' })).toEqual({ q: 'q_invalid' });
    expect(fieldsOf({ status: ['done', 'failed'] })).toEqual({ status: 'status_invalid' });
  });

  it('keeps ignoring unknown parameters, bracketed or not', () => {
    expect(fieldsOf({ status: 'done', _: '1', 'other[x]': 'y' })).toEqual({});
  });
});
