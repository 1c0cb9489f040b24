import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** JSON logs. Authorization headers and anything named like a secret are redacted by path. */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    name,
    level,
    base: { app: name },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.secret', '*.password'],
      censor: '[REDACTED]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
