// What every handler answers: one response type, sent by one function. JSON bodies (a value to
// serialise, or text already serialised once, where a failure could be named) and files (bytes
// streamed with their headers). Errors are thrown as DatasetErrors and answered as __ERROR.

import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { WIRE } from '../config/wire.js';
import type { DatasetError } from '../errors/dataset-error.js';
import { noneMatch } from './etag.js';

export type RestResponse =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown; readonly etag?: string }
  | { readonly kind: 'jsonText'; readonly status: number; readonly text: string; readonly etag?: string }
  | { readonly kind: 'file'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: Readable | Buffer | null };

const JSON_TYPE = 'application/json; charset=utf-8';

/** Headers on every answer: browsers read it as nothing but data. */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  // what an answer says depends on the session that asked: no cache keeps it for another
  'cache-control': 'no-store',
};

/** A JSON answer's headers, set in one call. */
const JSON_HEADERS = { ...SECURITY_HEADERS, 'content-type': JSON_TYPE };

export function json(body: unknown, status = 200): RestResponse {
  return { kind: 'json', status, body };
}

export function jsonText(text: string, status = 200, etag?: string): RestResponse {
  return etag === undefined ? { kind: 'jsonText', status, text } : { kind: 'jsonText', status, text, etag };
}

/** The same answer with an entity tag (a read's: answered 304 when the client has it already). */
export function tagged(response: RestResponse, etag: string): RestResponse {
  return response.kind === 'file' ? response : { ...response, etag };
}

export function file(status: number, headers: Readonly<Record<string, string>>, body: Readable | Buffer | null): RestResponse {
  return { kind: 'file', status, headers, body };
}

/** The body of an error answer: {"__ERROR": [...]}. */
export function errorBody(error: DatasetError): string {
  return JSON.stringify({ [WIRE.ERROR]: error.toWire() });
}

/** The size of the body a 304 did not send: whether a 200 would have been compressed, so carried a tag with the encoding (conventions.ts). */
export const withheldBytes = new WeakMap<FastifyReply, number>();

/** Sends the answer; one whose tag the request's If-None-Match names is 304 with no body. */
export function send(reply: FastifyReply, response: RestResponse, ifNoneMatch?: string): FastifyReply {
  reply.code(response.status);
  if (response.kind !== 'file' && response.etag !== undefined) {
    reply.header('etag', response.etag);
    if (noneMatch(ifNoneMatch, response.etag)) {
      // the tag a 200 would carry (RFC 9110 §15.4.5): the answer's own, strong for an entity
      // however the client wrote it, with the encoding the 200 would have been sent in (added by
      // conventions.ts from the size of the body withheld); Vary as on that answer
      withheldBytes.set(reply, response.kind === 'jsonText' ? Buffer.byteLength(response.text) : Buffer.byteLength(JSON.stringify(response.body)));
      return reply.code(304).headers(SECURITY_HEADERS).header('vary', 'accept-encoding').send();
    }
  }
  switch (response.kind) {
    case 'json':
      return reply.headers(JSON_HEADERS).send(JSON.stringify(response.body));
    case 'jsonText':
      return reply.headers(JSON_HEADERS).send(response.text);
    case 'file':
      // (a file's own headers may say more: its content-security-policy, its cache-control)
      reply.headers(SECURITY_HEADERS);
      for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
      return reply.send(response.body ?? undefined);
    default: {
      const never: never = response;
      return never;
    }
  }
}

export function sendError(reply: FastifyReply, error: DatasetError): FastifyReply {
  if (error.retryAfterS !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterS))));
  return reply.code(error.status).headers(JSON_HEADERS).send(errorBody(error));
}
