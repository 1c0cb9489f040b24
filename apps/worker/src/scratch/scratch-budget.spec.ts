import { TranscriptFailure } from '../failures';
import { ScratchBudget } from './scratch-budget';

describe('ScratchBudget', () => {
  it('counts what is written and refuses what would pass the limit with audio_too_large, not retried', () => {
    const budget = new ScratchBudget(1000);
    budget.take(600);
    expect(budget.left).toBe(400);
    budget.check(400);
    let thrown: unknown;
    try {
      budget.take(401);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(TranscriptFailure);
    expect(thrown).toMatchObject({ code: 'audio_too_large', retryable: false });
    expect((thrown as Error).message).toBe(
      'The audio needs more working space than this service allows for one transcription (1000 bytes).',
    );
    expect(budget.left).toBe(400);
    expect(() => budget.check(401)).toThrow(TranscriptFailure);
  });
});
