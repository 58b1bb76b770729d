// The server's logger: pino, JSON lines on stderr (stdout stays free for the ready line).
// Fastify's own request logger is off: it costs more per request than a read by key, so requests
// are logged by a hook of ours, and only at debug and trace levels.

import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level = 'info'): Logger {
  return pino({ level, name: 'dataset-rest' }, pino.destination({ fd: 2, sync: true }));
}
