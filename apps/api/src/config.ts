import {
  type Env,
  type CommonConfig,
  ConfigError,
  LIMITS,
  bool,
  commonConfig,
  modelNameFromPath,
  int,
  oneOf,
  optStr,
  secretToken,
  str,
} from '@hark/core';
import type { UploadHasherKind } from '@hark/storage';
// Types only: the configuration loads without the route contract's schemas.
import type { RouteKey } from './contract/routes.contract';
import { type CorsOrigins, parseCorsOrigins } from './middleware/cors';

export interface RateLimitRule {
  /** A route's key in the contract (method and OpenAPI path), as GET /v1/limits reports it. */
  endpoint: RouteKey;
  max: number;
  windowSeconds: number;
}

/** The spec's per-route limits (per account, sliding window), and the variable overriding each `max`. */
const RATE_LIMIT_RULES = [
  { endpoint: 'POST /v1/transcripts', max: 120, windowSeconds: 60, env: 'HARK_RATE_LIMIT_TRANSCRIPTS' },
  { endpoint: 'POST /v1/uploads', max: 120, windowSeconds: 60, env: 'HARK_RATE_LIMIT_UPLOADS' },
  { endpoint: 'PUT /v1/uploads/{id}', max: 600, windowSeconds: 60, env: 'HARK_RATE_LIMIT_CHUNKS' },
] as const satisfies readonly (RateLimitRule & { env: string })[];

export const DEFAULT_RATE_LIMITS: readonly RateLimitRule[] = RATE_LIMIT_RULES.map(
  ({ endpoint, max, windowSeconds }) => ({ endpoint, max, windowSeconds }),
);

/** Routes the spec does not list: per account, per route. */
export const DEFAULT_OTHER_ROUTE_LIMIT = { max: 1200, windowSeconds: 60 } as const;

export interface ApiConfig extends CommonConfig {
  port: number;
  host: string;
  /** Public base URL printed by the bring-up and used in links. */
  baseUrl: string;
  rateLimits: readonly RateLimitRule[];
  otherRouteLimit: { max: number; windowSeconds: number };
  /** Largest JSON/form body on create (bytes). */
  maxJsonBodyBytes: number;
  /** Time a graceful shutdown waits for in-flight requests. */
  shutdownGraceMs: number;
  /** After SIGTERM, time the API keeps serving (readiness 503, `Connection: close`) before it
   *  stops listening, so requests already routed here are answered rather than reset. */
  shutdownDrainMs: number;
  /** Milliseconds a key look-up stays cached in-process (0 = always ask Postgres): a revoked key
   *  stops working on every replica within this time. Default 2000. */
  authCacheMs: number;
  dbPoolSize: number;
  /** Hourly rates in cents (decimal strings): plain, and with `speakers`. */
  ratePerHour: string;
  speakersRatePerHour: string;
  /** Seconds of audio the provisional hold at create covers (decisions: 60). */
  provisionalHoldSeconds: number;
  /** `model` reported on transcripts, derived from WHISPER_MODEL's file name unless HARK_MODEL_NAME is set. */
  modelName: string;
  /** How long an upload's writer lock outlives a writer that vanished (ms). */
  uploadLockTtlMs: number;
  /** `HARK_UPLOAD_QUOTA_BYTES`: bytes an account may hold in uploads no transcript has used yet
   *  (not erased; a declared `expectedBytes` counts in full from creation). Default 4 GiB. */
  uploadQuotaBytes: number;
  /** `HARK_UPLOAD_NO_CREDIT_BYTES`: the same cap while the account's available balance is 0 or
   *  less (refused 402 `insufficient_balance` beyond it). Default 25 MB. */
  uploadNoCreditBytes: number;
  /** `HARK_QUEUED_PER_ACCOUNT`: transcribe jobs one account may have waiting in the queue; the
   *  rest wait in Postgres and are fed in as its jobs start (fair scheduling). Default 1. */
  queuedPerAccount: number;
  /** `HARK_UPLOAD_HASHER`: `auto` (native OpenSSL SHA-256 where it loads, else wasm on a worker
   *  thread), `native` (fail at the first upload if it cannot load) or `thread`. Default auto. */
  uploadHasher: UploadHasherKind;
  /** `HARK_METRICS_TOKEN`: when set, `GET /metrics` needs it as a bearer token. Unset (default):
   *  only clients on this machine, connected directly, may read it. */
  metricsToken: string | undefined;
  /** `HARK_OPERATOR_TOKEN`: turns on the read-only queue dashboard at `/admin/queues`, behind it. Default: off. */
  operatorToken: string | undefined;
  /** POST /v1/audio/*: how long a request may take, from its arrival, before it answers 504 naming its
   *  transcript (HARK_OPENAI_WAIT_SECONDS, default 580: under the openai clients' 600 s time-out, past
   *  which they retry and so would start a second transcript). */
  openaiWaitSeconds: number;
  /** POST /v1/audio/*: largest `file` in bytes (HARK_OPENAI_MAX_FILE_BYTES, default 25 MiB as OpenAI; at most 100 MB). */
  openaiMaxFileBytes: number;
  /** POST /v1/audio/*: requests one account may have running at once, reading or waiting, on every
   *  replica together (HARK_OPENAI_WAITING_PER_ACCOUNT, default 10); past it 429 `too_many_waiting_requests`. */
  openaiWaitingPerAccount: number;
  /** `HARK_CORS_ORIGINS`: origins whose pages may call the API (a comma-separated list, or `*`). Default: none. */
  corsOrigins: CorsOrigins;
  /** Check every response against the OpenAPI document (HARK_VALIDATE_RESPONSES; tests only, never production). */
  validateResponses: boolean;
}

/** Parses the API's configuration once at boot. Throws ConfigError naming the bad variable. */
export function loadApiConfig(env: Env = process.env): ApiConfig {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = str(env, 'HOST', '0.0.0.0');
  const rateLimits = RATE_LIMIT_RULES.map(
    (r): RateLimitRule => ({
      endpoint: r.endpoint,
      max: int(env, r.env, r.max, 1),
      windowSeconds: r.windowSeconds,
    }),
  );
  return {
    ...commonConfig(env),
    port,
    host,
    baseUrl: optStr(env, 'HARK_BASE_URL') ?? `http://127.0.0.1:${port}`,
    rateLimits,
    otherRouteLimit: {
      ...DEFAULT_OTHER_ROUTE_LIMIT,
      max: int(env, 'HARK_RATE_LIMIT_OTHER', DEFAULT_OTHER_ROUTE_LIMIT.max, 1),
    },
    maxJsonBodyBytes: int(env, 'HARK_MAX_JSON_BODY_BYTES', 1024 * 1024, 1024),
    shutdownGraceMs: int(env, 'HARK_SHUTDOWN_GRACE_MS', 25_000, 0),
    shutdownDrainMs: int(env, 'HARK_SHUTDOWN_DRAIN_MS', 2000, 0),
    authCacheMs: int(env, 'HARK_AUTH_CACHE_MS', 2000, 0, 60_000),
    dbPoolSize: int(env, 'HARK_DB_POOL_SIZE', 10, 1),
    ratePerHour: decimal(env, 'HARK_RATE_PER_HOUR', '36'),
    speakersRatePerHour: decimal(env, 'HARK_SPEAKERS_RATE_PER_HOUR', '48'),
    provisionalHoldSeconds: int(env, 'HARK_PROVISIONAL_HOLD_SECONDS', 60, 1),
    modelName:
      optStr(env, 'HARK_MODEL_NAME') ?? modelNameFromPath(str(env, 'WHISPER_MODEL', 'ggml-base.en.bin')),
    uploadLockTtlMs: int(env, 'HARK_UPLOAD_LOCK_TTL_MS', 30_000, 1000, 30_000),
    uploadQuotaBytes: int(env, 'HARK_UPLOAD_QUOTA_BYTES', 4 * 1024 ** 3, 0),
    uploadNoCreditBytes: int(env, 'HARK_UPLOAD_NO_CREDIT_BYTES', 25_000_000, 0),
    queuedPerAccount: int(env, 'HARK_QUEUED_PER_ACCOUNT', 1, 1, 1000),
    uploadHasher: oneOf(env, 'HARK_UPLOAD_HASHER', ['auto', 'native', 'thread'], 'auto'),
    metricsToken: secretToken(env, 'HARK_METRICS_TOKEN'),
    operatorToken: secretToken(env, 'HARK_OPERATOR_TOKEN'),
    validateResponses: bool(env, 'HARK_VALIDATE_RESPONSES', false),
    corsOrigins: parseCorsOrigins(env['HARK_CORS_ORIGINS']),
    openaiWaitSeconds: int(env, 'HARK_OPENAI_WAIT_SECONDS', 580, 1, 3600),
    openaiMaxFileBytes: int(
      env,
      'HARK_OPENAI_MAX_FILE_BYTES',
      25 * 1024 * 1024,
      1,
      LIMITS.maxUploadRequestBytes,
    ),
    openaiWaitingPerAccount: int(env, 'HARK_OPENAI_WAITING_PER_ACCOUNT', 10, 1, 100_000),
  };
}

function decimal(env: Env, name: string, def: string): string {
  const v = env[name] ?? def;
  if (!/^\d{1,12}(\.\d{1,10})?$/.test(v))
    throw new ConfigError(`${name} must be a non-negative decimal, got "${v}"`);
  return v;
}
