import { HarkError } from '@hark/core';
import type { Response } from 'express';

/**
 * Aborted when the client's connection closes before its answer was sent: the blob store's
 * calls for the request stop then, instead of running to their time-outs for nobody (a store
 * that hangs would hold an upload's lock all that while). Logged as 408, like a body dropped for
 * silence (`watchIdle`); nobody is there to read it.
 */
export function clientGone(res: Response): AbortSignal {
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished)
      gone.abort(new HarkError('request_timeout', 'The connection closed before the request was done.'));
  });
  return gone.signal;
}
