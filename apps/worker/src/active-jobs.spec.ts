import { ActiveJobs, JobAbort } from './active-jobs';

describe('ActiveJobs', () => {
  it('cancel aborts only the named job, with a cancel reason', () => {
    const jobs = new ActiveJobs();
    const a = jobs.begin('tr_a');
    const b = jobs.begin('tr_b');
    expect(jobs.cancel('tr_a')).toBe(true);
    expect(jobs.cancel('tr_unknown')).toBe(false);
    expect(a.aborted).toBe(true);
    expect((a.reason as JobAbort).kind).toBe('canceled');
    expect(b.aborted).toBe(false);
  });

  it('idle resolves true once every job ended, false after the time-out', async () => {
    const jobs = new ActiveJobs();
    const s = jobs.begin('tr_a');
    expect(await jobs.idle(20)).toBe(false);
    setTimeout(() => jobs.end('tr_a', s), 10);
    expect(await jobs.idle(1000)).toBe(true);
    expect(jobs.size).toBe(0);
  });

  it('handBackAll aborts everything with the hand-back reason and waits for each to let go', async () => {
    const jobs = new ActiveJobs();
    const s = jobs.begin('tr_a');
    s.addEventListener('abort', () => setTimeout(() => jobs.end('tr_a', s), 5));
    await expect(jobs.handBackAll()).resolves.toBe(1);
    expect((s.reason as JobAbort).kind).toBe('hand_back');
  });

  it('an old registration cannot end its successor', () => {
    const jobs = new ActiveJobs();
    const first = jobs.begin('tr_a');
    jobs.begin('tr_a');
    jobs.end('tr_a', first);
    expect(jobs.size).toBe(1);
  });

  it('after stopAccepting a new job starts out aborted for hand-back', () => {
    const jobs = new ActiveJobs();
    jobs.stopAccepting();
    const s = jobs.begin('tr_late');
    expect(s.aborted).toBe(true);
    expect((s.reason as JobAbort).kind).toBe('hand_back');
  });

  it('allRecorded waits for BullMQ to store the result of a job that ended; parked jobs need none', async () => {
    const jobs = new ActiveJobs();
    const a = jobs.begin('tr_a');
    const b = jobs.begin('tr_b');
    jobs.end('tr_a', a);
    jobs.end('tr_b', b, true);
    expect(await jobs.allRecorded(30)).toBe(false);
    jobs.recorded('tr_a');
    expect(await jobs.allRecorded(30)).toBe(true);
  });
});
