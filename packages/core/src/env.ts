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
  if (!Number.isFinite(n) || n < min) throw new ConfigError(`${name} must be a number >= ${min}, got "${raw}"`);
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
  if (!(choices as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** Configuration every process shares. */
export interface CommonConfig {
  databaseUrl: string;
  redisUrl: string;
  /** Operator secret: keys API-key HMACs and seals webhook secrets. */
  secret: string;
  logLevel: string;
  /** Prefix for Redis keys and BullMQ queues, so test runs and deployments never collide. */
  redisPrefix: string;
  allowPrivateUrls: boolean;
  storageDir: string;
}

export function commonConfig(env: Env): CommonConfig {
  const secret = str(env, 'HARK_SECRET');
  if (secret.length < 16) throw new ConfigError('HARK_SECRET must be at least 16 characters');
  return {
    databaseUrl: str(env, 'DATABASE_URL'),
    redisUrl: str(env, 'REDIS_URL', 'redis://127.0.0.1:6379'),
    secret,
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    redisPrefix: str(env, 'HARK_REDIS_PREFIX', 'hark'),
    allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS', false),
    storageDir: str(env, 'HARK_STORAGE_DIR', '.hark/storage'),
  };
}
