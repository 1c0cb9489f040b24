// Jest fixtures (`@hark/testing/jest`): each call registers beforeAll/afterAll in the block it is
// called in (a test file, or a describe) and returns the thing it sets up, read through a proxy
// that refuses to be read before beforeAll has run. Kept out of the package's main entry, which
// the benches and the fault suite load outside jest.
//
//   const api = apiTest({ start: () => startTestApi(), account: { toppedUp: true } });
//   it('...', () => request(api.app).get('/v1/balance').set(api.auth));
//
// The apps' own test helpers bind the in-process parts (apps/api/test/helpers.ts `apiTest`,
// apps/worker/test/worker-test-env.ts `workerTest`, apps/webhook-dispatcher/test/dispatcher-env.ts
// `dispatcherTest`): this package cannot import the apps, whose tests import it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Db, createDb } from '@hark/db';
import { type TestAccount, createTestAccount } from './factories';
import { type AppProcess, type RunningApi, startApiProcess, startApp } from './processes';
import { testEngine } from './test-env';

export type AccountOptions = Parameters<typeof createTestAccount>[2];

/**
 * `setup` in beforeAll, `teardown` in afterAll (given what setup returned); the value returned
 * stands for the one set up.
 */
export function fixture<T extends object>(
  setup: () => T | Promise<T>,
  teardown?: (value: T) => unknown,
  timeoutMs?: number,
): T {
  let value: T | undefined;
  const first: (() => unknown)[] = [];
  beforeAll(async () => {
    value = await setup();
  }, timeoutMs);
  afterAll(async () => {
    try {
      for (const fn of first.splice(0).reverse()) await fn();
    } finally {
      if (value !== undefined) await teardown?.(value);
    }
  }, timeoutMs);
  const current = (what: string | symbol): T => {
    if (value === undefined) throw new Error(`fixture read (${String(what)}) before its beforeAll ran`);
    return value;
  };
  const proxy = new Proxy({} as T, {
    get: (_t, prop) => Reflect.get(current(prop), prop),
    set: (_t, prop, v) => Reflect.set(current(prop), prop, v),
    has: (_t, prop) => Reflect.has(current(prop), prop),
  });
  beforeTeardowns.set(proxy, first);
  return proxy;
}

const beforeTeardowns = new WeakMap<object, (() => unknown)[]>();

/**
 * Scratch folders for the block it is called in (a test file, or a describe): the returned
 * function makes one under the OS temp folder (`prefix` starts its name), and every folder made
 * is removed after the block.
 */
export function scratchFolders(): (prefix: string) => Promise<string> {
  const made: string[] = [];
  afterAll(() => Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true }))));
  return async (prefix) => {
    const dir = await mkdtemp(path.join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}

/**
 * Runs `fn` in the afterAll of fixture `f`, before `f` is torn down (last registered, first run),
 * for what was built on it: jest runs afterAll hooks in the order they were declared, so one
 * declared after the fixture would run after it had closed.
 */
export function teardownFirst(f: object, fn: () => unknown): void {
  const list = beforeTeardowns.get(f);
  if (!list) throw new Error('teardownFirst needs a value returned by a fixture');
  list.push(fn);
}

/**
 * A webhook_deliveries record (as the dispatcher stores it or the API lists it), to compare with
 * `toEqual`: an id, no error, a duration and not manual, then `fields`.
 */
export function deliveryRecord(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: expect.stringMatching(/^whd_/),
    error: null,
    durationMs: expect.any(Number),
    manual: false,
    ...fields,
  };
}

/** What an in-process API built for a test offers the fixture. */
export interface ApiUnderTest {
  db: Db;
  /** HARK_SECRET of the app (its keys are issued with it). */
  secret: string;
  close(): Promise<void>;
}

export type ApiFixture<A extends ApiUnderTest> = A & {
  /** The account made for the block (`account` option); throws where none was asked for. */
  account: TestAccount;
  /** `account.auth`: its Authorization header. */
  auth: TestAccount['auth'];
  /** Another account with a key, on the app's database. */
  newAccount(opts?: AccountOptions): Promise<TestAccount>;
};

/** An in-process API for a block: started before its tests, with an account if asked, closed after. */
export function apiTest<A extends ApiUnderTest>(opts: {
  start: () => A | Promise<A>;
  account?: AccountOptions;
}): ApiFixture<A> {
  return fixture(
    async () => {
      const api = await opts.start();
      const newAccount = (o?: AccountOptions) => createTestAccount(api.db, api.secret, o);
      const account = opts.account
        ? await newAccount(opts.account).catch(async (e: unknown) => {
            await api.close();
            throw e;
          })
        : undefined;
      const theAccount = (): TestAccount => {
        if (!account) throw new Error('apiTest was given no `account` option');
        return account;
      };
      return Object.defineProperties(api, {
        newAccount: { value: newAccount },
        account: { get: theAccount },
        auth: { get: () => theAccount().auth },
      }) as ApiFixture<A>;
    },
    (api) => api.close(),
  );
}

/** What a worker or dispatcher harness (the apps' test folders) offers the fixture. */
export interface HarnessUnderTest {
  /** The environment its processes start with (Postgres, Redis, prefix, folders, engine). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export type HarnessFixture<H extends HarnessUnderTest> = H & {
  /** A built process of the harness's app on its environment (plus `env`), once it logged it is ready. */
  startProcess(env?: Record<string, string>): Promise<AppProcess>;
  /** A built API process on the harness's environment (plus `env`), once it listens. */
  startApi(env?: Record<string, string>): Promise<RunningApi>;
};

const READY_LOG = { worker: 'worker ready', 'webhook-dispatcher': 'dispatcher ready' } as const;

/**
 * A harness for a block: `start` builds it (what runs in process, with a fake or the real engine,
 * is the harness's; built processes of `app` and the API are started here). Processes still
 * running at the end are killed, then the harness closes.
 */
export function harnessTest<H extends HarnessUnderTest>(
  app: keyof typeof READY_LOG,
  start: () => Promise<H>,
): HarnessFixture<H> {
  const processes: AppProcess[] = [];
  return fixture(
    async () => {
      const h = await start();
      return Object.assign(h, {
        async startProcess(env: Record<string, string> = {}) {
          const p = startApp(app, { ...h.env, ...env });
          processes.push(p);
          await p.waitForLog(READY_LOG[app], 20_000);
          return p;
        },
        startApi: (env: Record<string, string> = {}) =>
          startApiProcess({ ...h.env, ...env }, { started: (p) => processes.push(p), readyMs: 20_000 }),
      });
    },
    async (h) => {
      for (const p of processes) p.kill('SIGKILL');
      await Promise.allSettled(processes.map((p) => p.exited));
      await h.close();
    },
  );
}

/** `harnessTest` of the worker (apps/worker/test/worker-test-env.ts binds its harness). */
export const workerTest = <H extends HarnessUnderTest>(start: () => Promise<H>) =>
  harnessTest('worker', start);

/** `harnessTest` of the webhook dispatcher (apps/webhook-dispatcher/test/dispatcher-env.ts). */
export const dispatcherTest = <H extends HarnessUnderTest>(start: () => Promise<H>) =>
  harnessTest('webhook-dispatcher', start);

type Env = Record<string, string>;

export interface StackOptions {
  /** Names the scratch folder and the Redis prefix. */
  name: string;
  /** Environment of every process, after the defaults (may read the scratch folder). */
  env?: (root: string) => Env | Promise<Env>;
  /** Environment of the API process alone, after `env`. */
  apiEnv?: (root: string) => Env;
  /** Environment of the worker process alone, after `env`; `false`: no worker. */
  workerEnv?: ((root: string) => Env) | false;
  /** Start a webhook dispatcher too. */
  dispatcher?: boolean;
  /** Environment of the dispatcher process alone, after `env`. */
  dispatcherEnv?: (root: string) => Env;
  /** How long the worker may take to log "worker ready" (default 30 s). */
  workerReadyMs?: number;
  /** Time-out of the set-up (default: jest's). */
  setupMs?: number;
}

export interface Stack {
  /** The scratch folder: the default store is `root`, the default job folder `root/tmp`. */
  root: string;
  env: Env;
  api: RunningApi;
  /** `api.base`: `http://127.0.0.1:<port>/v1`. */
  base: string;
  worker: AppProcess;
  /** The "worker ready" log line. */
  workerReady: Record<string, unknown>;
  dispatcher: AppProcess;
  /** A pool of two on the test database. */
  db: Db;
  /** An account with a key on the stack's database. */
  newAccount(opts?: AccountOptions): Promise<TestAccount>;
}

/**
 * The built API and worker (and dispatcher) as processes for a block, on the test database and
 * Redis, with the test engine by default; after the block each gets SIGTERM and must exit 0.
 */
export function stackTest(opts: StackOptions): Stack {
  const started: AppProcess[] = [];
  const stop = async (signal: NodeJS.Signals) => {
    for (const p of started) p.kill(signal);
    return Promise.all(started.map((p) => p.exited));
  };
  return fixture(
    () =>
      startStack(opts, started).catch(async (e: unknown) => {
        await stop('SIGKILL'); // a set-up that failed half-way leaves no process behind
        throw e;
      }),
    async (stack) => {
      for (const code of await stop('SIGTERM')) expect(code).toBe(0);
      await stack.db.$disconnect();
      await rm(stack.root, { recursive: true, force: true });
    },
    opts.setupMs,
  );
}

async function startStack(opts: StackOptions, started: AppProcess[]): Promise<Stack> {
  const root = await mkdtemp(path.join(tmpdir(), `hark-${opts.name}-`));
  const env: Env = {
    PORT: '0',
    HARK_STORAGE_DIR: root,
    HARK_TMP_DIR: path.join(root, 'tmp'),
    HARK_REDIS_PREFIX: `hark-${opts.name}-${process.pid}`,
    WHISPER_BIN: testEngine.whisperBin,
    WHISPER_MODEL: testEngine.whisperModel,
    HARK_RETENTION_SWEEP_MS: '0',
    // The reconciler acts on every account of the shared test database.
    HARK_RECONCILE_INTERVAL_MS: '0',
    ...(await opts.env?.(root)),
  };
  const start = (name: Parameters<typeof startApp>[0], extra: Env) => {
    const p = startApp(name, { ...env, ...extra });
    started.push(p);
    return p;
  };
  const workerEnv = opts.workerEnv;
  const worker = workerEnv === false ? undefined : start('worker', workerEnv?.(root) ?? {});
  const dispatcher = opts.dispatcher
    ? start('webhook-dispatcher', opts.dispatcherEnv?.(root) ?? {})
    : undefined;
  const api = await startApiProcess({ ...env, ...opts.apiEnv?.(root) }, { started: (p) => started.push(p) });
  const workerReady = await worker?.waitForLog('worker ready', opts.workerReadyMs ?? 30_000);
  await dispatcher?.waitForLog('dispatcher ready', 20_000);
  const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
  const stack = {
    root,
    env,
    api,
    base: api.base,
    db,
    newAccount: (o?: AccountOptions) => createTestAccount(db, process.env.HARK_SECRET!, o),
  };
  return Object.defineProperties(stack, {
    worker: present(worker, 'worker'),
    workerReady: present(workerReady, 'worker'),
    dispatcher: present(dispatcher, 'dispatcher'),
  }) as Stack;
}

/** A property that reads `value`, or throws where the stack has none. */
function present<V>(value: V | undefined, what: string): PropertyDescriptor {
  return {
    enumerable: true,
    get: () => {
      if (value === undefined) throw new Error(`stackTest started no ${what}`);
      return value;
    },
  };
}
