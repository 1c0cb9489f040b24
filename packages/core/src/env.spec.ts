import { ConfigError, commonConfig, storageConfig } from './env';

const s3 = { HARK_STORAGE: 's3', HARK_S3_BUCKET: 'b' };

describe('storageConfig', () => {
  it('local by default; S3 with the documented defaults, no time-out unless one is set', () => {
    expect(storageConfig({})).toEqual({ driver: 'local' });
    expect(storageConfig(s3)).toEqual({
      driver: 's3',
      bucket: 'b',
      prefix: 'uploads/',
      region: 'us-east-1',
      forcePathStyle: false,
    });
    expect(
      storageConfig({ ...s3, HARK_S3_CONNECT_TIMEOUT_MS: '2000', HARK_S3_REQUEST_TIMEOUT_MS: '15000' }),
    ).toMatchObject({ connectTimeoutMs: 2000, requestTimeoutMs: 15_000 });
  });

  it('refuses a time-out that is not a whole number of ms in range, naming the variable', () => {
    for (const [name, value] of [
      ['HARK_S3_CONNECT_TIMEOUT_MS', '0'],
      ['HARK_S3_CONNECT_TIMEOUT_MS', '1.5'],
      ['HARK_S3_REQUEST_TIMEOUT_MS', '-1'],
      ['HARK_S3_REQUEST_TIMEOUT_MS', 'soon'],
    ] as const)
      expect(() => storageConfig({ ...s3, [name]: value })).toThrow(new RegExp(`^${name} `));
  });

  it('HARK_S3_PREFIX must name a folder: not empty, ending in "/"', () => {
    // With '' or 'hark', the upload sweeper took every id-like name of the bucket for an orphan
    // of its own, another deployment's ('hark-staging...') included.
    for (const prefix of ['', 'hark', 'hark/uploads', '/', 'a b/'])
      expect(() => storageConfig({ ...s3, HARK_S3_PREFIX: prefix })).toThrow(
        expect.objectContaining({
          name: 'ConfigError',
          message: expect.stringMatching(/^HARK_S3_PREFIX must be .* ending in "\/"/),
        }),
      );
    for (const prefix of ['uploads/', 'hark/uploads/', 'hark-staging/'])
      expect(storageConfig({ ...s3, HARK_S3_PREFIX: prefix })).toMatchObject({ prefix });
    // Not read at all by the local driver.
    expect(storageConfig({ HARK_S3_PREFIX: '' })).toEqual({ driver: 'local' });
  });

  it('every process reads it through commonConfig, so each fails at start on a bad prefix', () => {
    const env = { DATABASE_URL: 'postgresql://x@h/db', HARK_SECRET: '0123456789abcdef', ...s3 };
    expect(commonConfig(env).storage).toMatchObject({ prefix: 'uploads/' });
    expect(() => commonConfig({ ...env, HARK_S3_PREFIX: 'hark' })).toThrow(ConfigError);
  });
});
