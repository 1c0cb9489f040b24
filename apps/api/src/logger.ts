import pino, { type Logger } from 'pino';

/** JSON logs. Authorization headers and anything named like a secret are redacted by path. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    base: { app: name },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.secret', '*.password'],
      censor: '[REDACTED]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

export type { Logger };
