// /admin/queues: read-only Bull Board over the transcribe and webhook queues (HARK_OPERATOR_TOKEN)
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { HarkError } from '@hark/core';
import { QUEUES, catalogQueue } from '@hark/queue';
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { operatorAuth } from '../middleware/operator-auth';

export const QUEUE_BOARD_PATH = '/admin/queues';

export interface QueueBoard {
  /** Mount at {@link QUEUE_BOARD_PATH}: operator token, read-only guard, then the board. */
  handlers: RequestHandler[];
  close(): Promise<void>;
}

const DESCRIPTIONS: Record<string, string> = {
  [QUEUES.transcribe]: 'Transcription jobs; job id = transcript id, payload ids only.',
  [QUEUES.webhook]: 'Completion notices; job id = <transcript>-attempt-<n> or a replay delivery id.',
};

/**
 * Bull Board for operators, read-only twice over: every queue in `readOnlyMode` (no retry,
 * clean, pause or add), and anything but GET and HEAD refused before the board sees it. Job
 * payloads and results hold ids only (see @hark/queue), so nothing secret is shown.
 */
export function queueBoard(redis: Redis, redisPrefix: string, token: string): QueueBoard {
  const queues = [QUEUES.transcribe, QUEUES.webhook].map((name) => catalogQueue(name, redis, redisPrefix));
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: queues.map(
      (q) => new BullMQAdapter(q, { readOnlyMode: true, description: DESCRIPTIONS[q.name] ?? '' }),
    ),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Hark queues' } },
  });
  const board = serverAdapter.getRouter() as RequestHandler & { disable(setting: string): void };
  board.disable('x-powered-by');
  const readOnly: RequestHandler = (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    next(new HarkError('not_found', 'The queue dashboard is read-only.'));
  };
  return {
    handlers: [operatorAuth(token), readOnly, board],
    close: async () => {
      await Promise.all(queues.map((q) => q.close()));
    },
  };
}
