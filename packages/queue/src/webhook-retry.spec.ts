import { delayBeforeAttempt, maxAttempts, webhookSchedule } from './webhook-retry';

describe('webhookSchedule', () => {
  it('is the decided schedule: 11 attempts, about 9 hours', () => {
    const minutes = webhookSchedule.delaysMs.map((ms) => ms / 60_000);
    expect(minutes).toEqual([0, 0.5, 1, 5, 10, 30, 60, 60, 120, 120, 120]);
    expect(maxAttempts).toBe(11);
    expect(webhookSchedule.delaysMs).toHaveLength(maxAttempts);
    const total = webhookSchedule.delaysMs.reduce((a, b) => a + b, 0);
    expect(total).toBe(webhookSchedule.totalDelayMs);
    expect(total / 3_600_000).toBeCloseTo(8.775, 3);
  });

  it('gives the delay before each attempt, the first at once', () => {
    expect(delayBeforeAttempt(1)).toBe(0);
    expect(delayBeforeAttempt(2)).toBe(30_000);
    expect(delayBeforeAttempt(3)).toBe(60_000);
    expect(delayBeforeAttempt(7)).toBe(3_600_000);
    expect(delayBeforeAttempt(11)).toBe(7_200_000);
  });

  it('says stop after the last attempt', () => {
    expect(delayBeforeAttempt(12)).toBeNull();
    expect(delayBeforeAttempt(40)).toBeNull();
  });

  it('scales delays by the time scale, in whole ms', () => {
    expect(delayBeforeAttempt(2, 0.001)).toBe(30);
    expect(delayBeforeAttempt(11, 0.001)).toBe(7_200);
    expect(delayBeforeAttempt(2, 0)).toBe(0);
    expect(delayBeforeAttempt(2, 0.0001)).toBe(3);
    expect(delayBeforeAttempt(12, 0.001)).toBeNull();
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses attempt %p', (attempt) => {
    expect(() => delayBeforeAttempt(attempt)).toThrow(RangeError);
  });

  it.each([-1, Number.POSITIVE_INFINITY, Number.NaN])('refuses time scale %p', (scale) => {
    expect(() => delayBeforeAttempt(2, scale)).toThrow(RangeError);
  });
});
