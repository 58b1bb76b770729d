// The Fastify side of the REST API: one catch-all route per verb under /rest, our own URL grammar
// behind it, and the error handler that turns every failure into an __ERROR answer.

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Datastore } from '../datastore/datastore.js';
import type { Logger } from '../log.js';
import { DatasetError, isDatasetError } from '../errors/dataset-error.js';
import { WIRE } from '../config/wire.js';
import { REST_PREFIX } from './constants.js';
import { handleRest } from './dispatch.js';
import { RestAnswer } from './handlers/write.js';
import { FileAnswer } from './handlers/files.js';
import { JsonText } from './handlers/functions.js';
import { upload } from './handlers/upload.js';

const VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const JSON_TYPE = 'application/json; charset=utf-8';

/** The socket's file descriptor (-1 or none under inject and on Windows). Node keeps it on the socket's internal handle. */
function socketFd(request: FastifyRequest): number | undefined {
  const fd = (request.raw.socket as unknown as { _handle?: { fd?: unknown } } | undefined)?._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

export interface RestRouteOptions {
  /** the largest upload accepted, in bytes */
  readonly maxUploadBytes: number;
}

export async function restRoutes(app: FastifyInstance, ds: Datastore, log: Logger, options: RestRouteOptions): Promise<void> {
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    handleRest(ds, {
      method: request.method,
      url: request.raw.url ?? REST_PREFIX,
      caller: request.ip,
      body: request.body,
      headers: request.headers,
      socketFd: socketFd(request),
      origin: `${request.protocol}://${request.host}`,
    }).then((answer) => {
      if (answer instanceof FileAnswer) return sendFile(reply, answer);
      if (answer instanceof JsonText) return reply.header('content-type', JSON_TYPE).send(answer.text);
      if (answer instanceof RestAnswer) reply.code(answer.status);
      return reply.header('content-type', JSON_TYPE).send(JSON.stringify(answer instanceof RestAnswer ? answer.body : answer));
    });
  // 4D clients do not always label their JSON: a body sent as text is read as JSON too; and an
  // empty body labelled JSON (a delete, say) is no body rather than an error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string' }, (_request, text, done) => {
    try {
      done(null, (text as string).trim() === '' ? undefined : JSON.parse(text as string));
    } catch (e) {
      done(new DatasetError('INVALID_BODY', `the body is not valid JSON: ${(e as Error).message}`), undefined);
    }
  });
  app.route({ method: [...VERBS], url: REST_PREFIX, handler });
  app.route({ method: [...VERBS], url: `${REST_PREFIX}/*`, handler });

  app.setNotFoundHandler((request, reply) => {
    if (request.url === REST_PREFIX || request.url.startsWith(`${REST_PREFIX}/`) || request.url.startsWith(`${REST_PREFIX}?`)) {
      sendError(reply, new DatasetError('METHOD_NOT_ALLOWED', `${request.method} is not a method of the REST API: use ${VERBS.join(', ')} or HEAD`));
    } else {
      sendError(reply, new DatasetError('UNKNOWN_RESOURCE', `nothing is served at ${request.method} ${request.url}: the REST API lives under ${REST_PREFIX}/`));
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isDatasetError(error)) return sendError(reply, error);
    const status = error.statusCode ?? 500;
    if (status === 413) return sendError(reply, new DatasetError('BODY_TOO_LARGE', `the request body is larger than the ${app.initialConfig.bodyLimit} bytes accepted`));
    if (status >= 400 && status < 500) return sendError(reply, new DatasetError('INVALID_BODY', `the request cannot be read: ${error.message}`));
    // Unexpected: the cause goes to the log, not to the client.
    log.error({ err: error, method: request.method, url: request.url }, 'unexpected error');
    return sendError(reply, new DatasetError('INTERNAL', 'internal server error: the cause is in the server log'));
  });

  // Uploads read the raw body as it arrives: in a scope of their own, no body parser runs.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const uploadRoute = async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        const answer = await upload(ds, request.raw, options.maxUploadBytes);
        return reply.header('content-type', JSON_TYPE).send(JSON.stringify(answer));
      } catch (e) {
        // refused before the body was read to its end: the rest is not waited for
        if (!request.raw.readableEnded) reply.header('connection', 'close');
        throw e;
      }
    };
    const otherVerb = async (request: FastifyRequest) => {
      throw new DatasetError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on $upload: POST the file's bytes, with $rawPict=true (an image) or $binary=true`);
    };
    for (const url of [`${REST_PREFIX}/$upload`, `${REST_PREFIX}/$upload/`]) {
      scope.post(url, uploadRoute);
      scope.route({ method: ['PUT', 'PATCH', 'DELETE'], url, handler: otherVerb });
    }
  });
}

/** The bytes of an image or blob: streamed out, with their type, length and version tag. */
function sendFile(reply: FastifyReply, file: FileAnswer): FastifyReply {
  reply.code(file.status);
  for (const [name, value] of Object.entries(file.headers)) reply.header(name, value);
  return reply.send(file.body ?? undefined);
}

/** Failures Fastify meets before any route runs (a path it cannot decode), in our __ERROR shape. */
export function frameworkError(error: FastifyError, request: { url: string }, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_BAD_URL') {
    sendError(reply, new DatasetError('MALFORMED_URL', `bad percent-encoding in the URL '${request.url}'`));
  } else {
    sendError(reply, new DatasetError('INVALID_BODY', `the request cannot be read: ${error.message}`));
  }
}

function sendError(reply: FastifyReply, error: DatasetError): FastifyReply {
  return reply.code(error.status).header('content-type', JSON_TYPE).send(JSON.stringify({ [WIRE.ERROR]: error.toWire() }));
}
