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
    Type.String({ pattern: '^[0-9a-fA-F]{64}$', 'x-error': 'sha256_invalid', description: 'Lowercase hex SHA-256.' }),
  ),
});

export const UploadSchema = Type.Object({
  id: Type.String(),
  receivedBytes: Type.Integer(),
  expectedBytes: Type.Union([Type.Integer(), Type.Null()]),
  sha256: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
});
