import pino, { type Logger } from 'pino';

/**
 * JSON logs to stdout. Authorization headers and anything named like a secret are redacted by
 * path. Written asynchronously: a line waits only while an earlier write is in flight, so under
 * load many lines share one write instead of one blocking write per request line; pino flushes
 * what is pending when the process exits (not on SIGKILL).
 */
export function createLogger(level: string, name: string): Logger {
  return pino(
    {
      name,
      level,
      base: { app: name },
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.secret', '*.password'],
        censor: '[REDACTED]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.destination({ dest: 1, sync: false }),
  );
}

export type { Logger };
