import pino, { type Logger } from 'pino';

/**
 * JSON logs on stdout. Job lines carry `transcriptId` (child loggers); user-supplied URLs are not
 * logged (they can hold credentials in the query string).
 */
export function createLogger(level: string): Logger {
  return pino({
    name: 'worker',
    level,
    base: { app: 'worker' },
    redact: { paths: ['*.apiKey', '*.secret', '*.password', '*.url', 'url'], censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

export type { Logger };
