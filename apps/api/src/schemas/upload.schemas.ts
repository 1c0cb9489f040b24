import { Type } from '@sinclair/typebox';

export const UploadQuery = Type.Object({
  expectedBytes: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]{0,9}$',
      'x-error': 'expected_bytes_invalid',
      description: 'Declared size in bytes: a positive integer within 2 GiB.',
    }),
  ),
  sha256: Type.Optional(
    Type.String({
      pattern: '^[0-9a-fA-F]{64}$',
      'x-error': 'sha256_invalid',
      description: 'Lowercase hex SHA-256.',
    }),
  ),
});

export const UploadSchema = Type.Object(
  {
    id: Type.String({ description: 'Upload identifier (at most 36 characters).' }),
    receivedBytes: Type.Integer({ minimum: 0, description: 'Bytes durably stored so far: where to resume.' }),
    expectedBytes: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Declared size; null if not declared.',
    }),
    sha256: Type.Union([Type.String(), Type.Null()], {
      description: 'Declared digest (lowercase hex); null if not declared.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
