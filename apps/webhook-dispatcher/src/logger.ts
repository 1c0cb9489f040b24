import pino, { type Logger } from 'pino';

/**
 * JSON logs on stdout. Lines carry `transcriptId` and `attempt`; never the webhook URL (it can
 * hold credentials in its query string) nor the signing secret (nothing passes it to a logger;
 * the redaction is a second line of defence).
 */
export function createLogger(level: string): Logger {
  return pino({
    name: 'webhook-dispatcher',
    level,
    base: { app: 'webhook-dispatcher' },
    redact: {
      paths: ['*.secret', '*.secretHex', 'secretHex', '*.url', 'url', '*.headers', 'headers'],
      censor: '[REDACTED]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

export type { Logger };
