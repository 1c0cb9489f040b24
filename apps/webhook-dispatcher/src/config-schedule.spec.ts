import { delayBefore, webhookSchedule } from '@hark/queue';
import { loadDispatcherConfig } from './config';

const base = { DATABASE_URL: 'postgresql://x/y', HARK_SECRET: 'secret-0123456789abcdef' };

describe('delayBefore', () => {
  it('defaults to the decided schedule: 11 attempts, then null', () => {
    const { schedule } = loadDispatcherConfig(base);
    expect(schedule.delaysMs).toBe(webhookSchedule.delaysMs);
    expect([1, 2, 3, 11].map((a) => delayBefore(schedule, a))).toEqual([0, 30_000, 60_000, 7_200_000]);
    expect(delayBefore(schedule, 12)).toBeNull();
  });

  it('scales every delay by HARK_WEBHOOK_TIME_SCALE', () => {
    const { schedule } = loadDispatcherConfig({ ...base, HARK_WEBHOOK_TIME_SCALE: '0.001' });
    expect(delayBefore(schedule, 2)).toBe(30);
    expect(delayBefore(schedule, 11)).toBe(7200);
    expect(delayBefore(schedule, 12)).toBeNull();
  });

  it('HARK_WEBHOOK_SCHEDULE_MS replaces the schedule; its length is the attempt count', () => {
    const { schedule } = loadDispatcherConfig({
      ...base,
      HARK_WEBHOOK_SCHEDULE_MS: '0, 100,250',
      HARK_WEBHOOK_TIME_SCALE: '2',
    });
    expect([1, 2, 3, 4].map((a) => delayBefore(schedule, a))).toEqual([0, 200, 500, null]);
  });

  it('a bad variable fails at boot, naming it', () => {
    expect(() => loadDispatcherConfig({ ...base, HARK_WEBHOOK_SCHEDULE_MS: '0,1s' })).toThrow(
      /HARK_WEBHOOK_SCHEDULE_MS/,
    );
    expect(() => loadDispatcherConfig({ ...base, HARK_WEBHOOK_TIME_SCALE: '-1' })).toThrow(
      /HARK_WEBHOOK_TIME_SCALE/,
    );
    expect(() => loadDispatcherConfig({ ...base, HARK_DISPATCHER_CONCURRENCY: '0' })).toThrow(
      /HARK_DISPATCHER_CONCURRENCY/,
    );
  });
});

describe('loadDispatcherConfig', () => {
  it('refuses a HARK_METRICS_TOKEN shorter than 16 characters, as the API does', () => {
    expect(() => loadDispatcherConfig({ ...base, HARK_METRICS_TOKEN: 'abc' })).toThrow(
      'HARK_METRICS_TOKEN must be at least 16 characters',
    );
    expect(
      loadDispatcherConfig({ ...base, HARK_METRICS_TOKEN: 'scrape-token-0123456789' }).metrics.token,
    ).toBe('scrape-token-0123456789');
  });

  it('LOG_LEVEL must be a log level, and its error names it', () => {
    expect(() => loadDispatcherConfig({ ...base, LOG_LEVEL: 'verbose' })).toThrow(
      /^LOG_LEVEL must be one of/,
    );
    expect(loadDispatcherConfig({ ...base, LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
  });
});
