/**
 * Typed readers for environment variables. Each app parses its configuration once at boot
 * with these; a bad value fails fast with a message naming the variable.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

export function str(env: Env, name: string, def?: string): string {
  const v = env[name];
  if (v !== undefined && v !== '') return v;
  if (def !== undefined) return def;
  throw new ConfigError(`${name} is required`);
}

export function optStr(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

export function int(env: Env, name: string, def: number, min = -Infinity, max = Infinity): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function num(env: Env, name: string, def: number, min = -Infinity): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new ConfigError(`${name} must be a number >= ${min}, got "${raw}"`);
  return n;
}

export function bool(env: Env, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function oneOf<T extends string>(env: Env, name: string, choices: readonly T[], def: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!(choices as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}

/**
 * An optional secret such as `HARK_METRICS_TOKEN`: unset or empty means off; shorter than 16
 * characters fails at boot (the same rule in every process).
 */
export function secretToken(env: Env, name: string): string | undefined {
  const v = optStr(env, name);
  if (v !== undefined && v.trim().length < 16)
    throw new ConfigError(`${name} must be at least 16 characters`);
  return v;
}

/** `LOG_LEVEL` values: pino's levels. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Configuration every process shares. */
export interface CommonConfig {
  databaseUrl: string;
  redisUrl: string;
  /** Operator secret: keys API-key HMACs and seals webhook secrets. */
  secret: string;
  /** `LOG_LEVEL`: one of `LOG_LEVELS`. Default `info`. */
  logLevel: LogLevel;
  /** Prefix for Redis keys and BullMQ queues, so test runs and deployments never collide. */
  redisPrefix: string;
  allowPrivateUrls: boolean;
  /** The local driver's directory (`HARK_STORAGE_DIR`), shared by every process using it. */
  storageDir: string;
  /** Which blob store holds uploads (`HARK_STORAGE`): every process must use the same one. */
  storage: StorageConfig;
  /**
   * `HARK_START_TIMEOUT_MS`: how long a process waits at start for Postgres and Redis to answer
   * before it stops, naming DATABASE_URL or REDIS_URL. Default 60 000 (they may come up a little
   * after the others).
   */
  startTimeoutMs: number;
}

/**
 * `HARK_STORAGE=local` (default; the files under `HARK_STORAGE_DIR`) or `s3`: an S3-compatible
 * bucket (`HARK_S3_BUCKET`, `HARK_S3_PREFIX` default `uploads/`, `HARK_S3_REGION` default
 * `AWS_REGION` or us-east-1, `HARK_S3_ENDPOINT` for a server other than AWS,
 * `HARK_S3_FORCE_PATH_STYLE`, and the client's time-outs `HARK_S3_CONNECT_TIMEOUT_MS` and
 * `HARK_S3_REQUEST_TIMEOUT_MS`, whose defaults @hark/storage's `createS3Client` holds).
 * Credentials are not read here: the AWS SDK takes them from the usual variables
 * (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, profiles, instance roles), so they never sit in
 * a config object that could be logged.
 */
export type StorageConfig =
  | { driver: 'local' }
  | {
      driver: 's3';
      bucket: string;
      prefix: string;
      region: string;
      endpoint?: string;
      forcePathStyle: boolean;
      connectTimeoutMs?: number;
      requestTimeoutMs?: number;
    };

/**
 * `HARK_S3_PREFIX`: a folder of the bucket that holds Hark's uploads and nothing else, so it must
 * name one: not empty, ending in `/`. The upload sweeper removes what it finds there that no
 * upload row names; with `''` or `hark` (no slash) that was every id-like name of the bucket, or
 * of a deployment whose prefix merely starts the same (`hark-staging`).
 */
function s3Prefix(env: Env): string {
  const prefix = env.HARK_S3_PREFIX ?? 'uploads/';
  if (!/^\S+\/$/.test(prefix))
    throw new ConfigError(
      `HARK_S3_PREFIX must be a folder of the bucket that only Hark uses, ending in "/" (e.g. "uploads/"), got "${prefix}"`,
    );
  return prefix;
}

/** An optional time-out in ms (absent: the library's default). */
function optMs(env: Env, name: string, min: number, max: number): number | undefined {
  return optStr(env, name) === undefined ? undefined : int(env, name, 0, min, max);
}

export function storageConfig(env: Env): StorageConfig {
  if (oneOf(env, 'HARK_STORAGE', ['local', 's3'] as const, 'local') === 'local') return { driver: 'local' };
  const endpoint = optStr(env, 'HARK_S3_ENDPOINT');
  if (endpoint !== undefined && !/^https?:\/\/[^\s]+$/.test(endpoint))
    throw new ConfigError(`HARK_S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  const connectTimeoutMs = optMs(env, 'HARK_S3_CONNECT_TIMEOUT_MS', 100, 600_000);
  const requestTimeoutMs = optMs(env, 'HARK_S3_REQUEST_TIMEOUT_MS', 100, 3_600_000);
  return {
    driver: 's3',
    bucket: str(env, 'HARK_S3_BUCKET'),
    prefix: s3Prefix(env),
    region: str(env, 'HARK_S3_REGION', str(env, 'AWS_REGION', 'us-east-1')),
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: bool(env, 'HARK_S3_FORCE_PATH_STYLE', false),
    ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
  };
}

export function commonConfig(env: Env): CommonConfig {
  const secret = str(env, 'HARK_SECRET');
  if (secret.length < 16) throw new ConfigError('HARK_SECRET must be at least 16 characters');
  return {
    databaseUrl: str(env, 'DATABASE_URL'),
    redisUrl: str(env, 'REDIS_URL', 'redis://127.0.0.1:6379'),
    secret,
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    redisPrefix: str(env, 'HARK_REDIS_PREFIX', 'hark'),
    allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS', false),
    storageDir: str(env, 'HARK_STORAGE_DIR', '.hark/storage'),
    storage: storageConfig(env),
    startTimeoutMs: int(env, 'HARK_START_TIMEOUT_MS', 60_000, 100, 3_600_000),
  };
}
