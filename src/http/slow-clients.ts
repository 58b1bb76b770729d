// What a client that holds connections may cost: how many it may keep open (in all, and from one
// address), and how slowly it may send a request's body. Without these, a few hundred sockets
// kept open by sending nothing, or a body sent a byte every ten seconds, hold the server's
// sockets and memory for as long as the client likes (Fastify's requestTimeout is 0: none).
// Headers are Node's own business: headersTimeout cuts a request whose headers do not arrive in
// time, answered 408 in our shape by rest/plugin.ts's clientError.
//
// A body is watched through its socket's bytesRead (never by listening to the request's 'data',
// which would start the stream before its parser reads it): a JSON body must arrive whole within
// bodyTimeoutMs; an upload (its size up to --max-upload-size, sent for as long as it needs) only
// has to keep coming — at least minBytes in every window.

import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { DatasetError } from '../errors/dataset-error.js';
import { answerOnSocket } from '../rest/plugin.js';
import { isAttributeUpload, isUploadTarget } from '../rest/plan/request.js';

export interface SlowClientLimits {
  /** connections open at once at most (0: no limit) */
  readonly maxConnections: number;
  /** connections open at once from one address (0: no limit) */
  readonly maxConnectionsPerAddress: number;
  /** a JSON body arrives in full within this long, in ms */
  readonly bodyTimeoutMs: number;
  /** an upload sends at least `minBytes` in every window of `windowMs` */
  readonly upload: { readonly windowMs: number; readonly minBytes: number };
}

export function limitSlowClients(server: Server, limits: SlowClientLimits): void {
  limitConnections(server, limits);
  server.on('request', (request) => {
    const { socket } = request;
    const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return;
    const url = request.url ?? '';
    const upload = isUploadTarget(url) || (request.method === 'POST' && isAttributeUpload(url));
    const started = Date.now();
    let seen = socket.bytesRead;
    const every = upload ? limits.upload.windowMs : Math.min(limits.bodyTimeoutMs, 1000);
    const timer = setInterval(() => {
      if (request.complete || socket.destroyed) return clearInterval(timer);
      const read = socket.bytesRead - seen;
      seen = socket.bytesRead;
      const late = upload ? read < limits.upload.minBytes : Date.now() - started >= limits.bodyTimeoutMs;
      if (!late) return;
      clearInterval(timer);
      const refusal = new DatasetError('REQUEST_TIMEOUT', upload
        ? `the upload came too slowly: ${read} bytes in the last ${limits.upload.windowMs / 1000} s, less than the ${limits.upload.minBytes} it must send in each`
        : `the request's body did not arrive in full within ${limits.bodyTimeoutMs / 1000} s`);
      // (nothing of it was read into the datastore: a body is parsed, and an upload kept, only once complete)
      if (!socket.writableEnded && !request.socket.destroyed) answerOnSocket(socket, refusal);
      socket.destroy();
    }, every);
    timer.unref();
    request.once('close', () => clearInterval(timer));
  });
}

/** Counts the open connections, in all and by address; one past a limit is answered 503 and closed. */
function limitConnections(server: Server, limits: SlowClientLimits): void {
  if (limits.maxConnections === 0 && limits.maxConnectionsPerAddress === 0) return;
  let open = 0;
  const byAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const mine = byAddress.get(address) ?? 0;
    const full = limits.maxConnections > 0 && open >= limits.maxConnections
      ? `the server holds the ${limits.maxConnections} connections it takes at once`
      : limits.maxConnectionsPerAddress > 0 && mine >= limits.maxConnectionsPerAddress
        ? `${address} holds the ${limits.maxConnectionsPerAddress} connections one address may keep open at once: close some, or reuse them (keep-alive)`
        : undefined;
    if (full) {
      answerOnSocket(socket, new DatasetError('TOO_MANY_CONNECTIONS', full), { 'retry-after': '1' });
      socket.end();
      // (a client that reads nothing is not waited for)
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
    open++;
    byAddress.set(address, mine + 1);
    socket.once('close', () => {
      open--;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left === 0) byAddress.delete(address);
      else byAddress.set(address, left);
    });
  });
}
