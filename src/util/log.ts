// The server's logger: pino, JSON lines on stderr (stdout stays free for the ready line).
// Fastify's own request logger is off: it costs more per request than a read by key, so requests
// are logged by a hook of ours, and only at debug and trace levels.

import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level = 'info'): Logger {
  return pino({ level, name: 'dataset-rest' }, pino.destination({ fd: 2, sync: true }));
}

/**
 * A request's URL as a log line may show it: a sign-in callback's query (its code and state) and
 * a one-time passcode ($4DSID) left out — whoever reads the log should not be handed either.
 */
export function loggedUrl(url: string): string {
  if (url.includes('/$oidc/')) return url.split('?', 1)[0];
  return url.includes('4DSID=') ? url.replace(/((?:\$|%24)4DSID=)[^&]*/gi, '$1***') : url;
}
