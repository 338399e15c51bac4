import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    // a key must never reach a log line
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'api_key', 'key'], censor: '[redacted]' },
  });
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
