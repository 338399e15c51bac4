import pino, { type Logger } from 'pino';

export type { Logger };

/** The server logs to stdout; the CLI passes `toStderr`, since its stdout carries the JSON it answers with. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', options: { toStderr?: boolean } = {}): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      // a key must never reach a log line
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'api_key', 'key'], censor: '[redacted]' },
    },
    options.toStderr ? pino.destination(2) : undefined,
  );
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
