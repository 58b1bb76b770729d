// What every handler answers: one response type, sent by one function. JSON bodies (a value to
// serialise, text already serialised once where a failure could be named, or text made a slice
// at a time: answer-stream.ts) and files (bytes streamed with their headers). Errors are thrown
// as DatasetErrors and answered as __ERROR. A JSON answer may carry its hold in the server's
// answers in flight (answer-flight.ts: what it reserved when it measured its rows); send() follows
// it, every answer big enough and every streamed file or export, until the kernel has taken it.

import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { WATCHED_ANSWER_BYTES } from '../../config/limits.js';
import { WIRE } from '../../config/wire.js';
import type { DatasetError } from '../../errors/dataset-error.js';
import type { AnswerFlight, AnswerHold } from '../scope/answer-flight.js';
import { AnswerStream, Slices } from './answer-stream.js';
import { noneMatch } from '../request/etag.js';

export type RestResponse =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown; readonly etag?: string; readonly hold?: AnswerHold }
  | { readonly kind: 'jsonText'; readonly status: number; readonly text: string; readonly etag?: string; readonly hold?: AnswerHold }
  /** text longer than a slice: `first`, then what `slices` makes as the client takes it */
  | { readonly kind: 'jsonSlices'; readonly status: number; readonly first: string; readonly slices: Slices; readonly etag?: string; readonly hold?: AnswerHold }
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

/**
 * JSON text made from `pieces` a slice at a time: one string when it is no longer than a slice,
 * else its first slice now and the others as the client takes them. `hold`: the answer's share of
 * the answers in flight (what it reserved turns into text as the text is made).
 */
export function jsonPieces(pieces: Iterator<string, void>, hold?: AnswerHold, status = 200): RestResponse {
  const slices = new Slices(pieces);
  const first = slices.next() ?? '';
  // (one string is counted as made when it is sent; the slices of a stream as they are made)
  if (slices.done) return hold ? { kind: 'jsonText', status, text: first, hold } : { kind: 'jsonText', status, text: first };
  hold?.made(first.length);
  return hold ? { kind: 'jsonSlices', status, first, slices, hold } : { kind: 'jsonSlices', status, first, slices };
}

/** The same answer with its hold in the answers in flight. */
export function holding(response: RestResponse, hold: AnswerHold): RestResponse {
  return response.kind === 'file' ? response : { ...response, hold };
}

/** Lets go of what an answer that will not be sent holds (its hold, its slices). */
export function dropAnswer(response: RestResponse | undefined): void {
  if (response === undefined) return;
  // (a streamed body let go: an export stops reading, a watch stream ends and frees its slot)
  if (response.kind === 'file') return void (response.body instanceof Readable ? response.body.destroy() : undefined);
  response.hold?.release();
  if (response.kind === 'jsonSlices') response.slices.drop();
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

/**
 * Sends the answer; one whose tag the request's If-None-Match names is 304 with no body. A JSON
 * answer that holds a share of `flight`, or is big enough, is followed there until the kernel has
 * taken it (or its socket closed: the send timeout closes one whose client stops reading).
 */
export function send(reply: FastifyReply, response: RestResponse, ifNoneMatch?: string, flight?: AnswerFlight): FastifyReply {
  reply.code(response.status);
  if (response.kind !== 'file' && response.etag !== undefined) {
    reply.header('etag', response.etag);
    if (noneMatch(ifNoneMatch, response.etag)) {
      // the tag a 200 would carry (RFC 9110 §15.4.5): the answer's own, strong for an entity
      // however the client wrote it, with the encoding the 200 would have been sent in (added by
      // conventions.ts from the size of the body withheld: a streamed one is longer than a slice,
      // past the compression threshold); Vary as on that answer
      withheldBytes.set(reply, response.kind === 'jsonText' ? Buffer.byteLength(response.text) : response.kind === 'jsonSlices' ? Buffer.byteLength(response.first) : Buffer.byteLength(JSON.stringify(response.body)));
      dropAnswer(response);
      return reply.code(304).headers(SECURITY_HEADERS).header('vary', 'accept-encoding').send();
    }
  }
  switch (response.kind) {
    case 'json':
      return sendText(reply, JSON.stringify(response.body), response.hold, flight);
    case 'jsonText':
      return sendText(reply, response.text, response.hold, flight);
    case 'jsonSlices': {
      const hold = response.hold ?? flight?.open();
      // (HEAD: GET's headers, made from its first slice; no body goes, the rest is not made)
      if (reply.request.method === 'HEAD') response.slices.drop();
      const stream = new AnswerStream(response.first, response.slices, hold);
      hold?.follow(reply.raw, stream);
      return reply.headers(JSON_HEADERS).send(stream);
    }
    case 'file':
      // (a file's own headers may say more: its content-security-policy, its cache-control)
      reply.headers(SECURITY_HEADERS);
      for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
      // a streamed body (an export, a file's chunks) is followed as an answer made in slices is:
      // what its stream and socket hold counts in flight, and the send timeout cuts a client
      // that stops reading it
      if (flight && response.body instanceof Readable) flight.open().follow(reply.raw, response.body);
      return reply.send(response.body ?? undefined);
    default: {
      const never: never = response;
      return never;
    }
  }
}

/** A JSON text sent whole: followed in the answers in flight when it holds a share, or is big enough to wait in the socket's buffers. */
function sendText(reply: FastifyReply, text: string, hold: AnswerHold | undefined, flight: AnswerFlight | undefined): FastifyReply {
  if (hold || (flight && text.length >= WATCHED_ANSWER_BYTES)) {
    const held = hold ?? (flight as AnswerFlight).open();
    held.made(text.length);
    held.follow(reply.raw);
  }
  return reply.headers(JSON_HEADERS).send(text);
}

export function sendError(reply: FastifyReply, error: DatasetError): FastifyReply {
  if (error.retryAfterS !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterS))));
  // (an error names its request, sent X-Request-Id or not: the id a report quotes is the log's)
  reply.header('x-request-id', reply.request.id);
  return reply.code(error.status).headers(JSON_HEADERS).send(errorBody(error));
}
