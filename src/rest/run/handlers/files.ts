// The contents of an image or blob attribute: GET /rest/{dataClass}({key})/{attribute} (the
// deferred uri an entity carries adds $imageformat, $version and $expand). The
// bytes stream out of the database with the type read from the content, their length and an ETag
// (304 on If-None-Match), a single Range if asked (206); $imageformat converts an image (sharp,
// one at a time in a bounded queue: rest/scope/conversions.ts);
// $binary=true makes a download.
// An empty attribute, or a conversion that cannot be made, answers an empty 204 (reference §3.12).

import { Readable } from 'node:stream';
import { FILE_CHUNK, MAX_CONVERTED_PIXELS } from '../../../config/limits.js';
import { WIRE } from '../../../config/wire.js';
import type { FileStore, StoredFile } from '../../../datastore/index.js';
import { DatasetError } from '../../../errors/dataset-error.js';
import type { Action } from '../../plan/action.js';
import { findEntity } from '../collections.js';
import type { ImageFormat } from '../../request/options.js';
import { file as fileAnswer, type RestResponse } from '../../present/response.js';
import type { Scope } from '../../scope/scope.js';

const MIME: Record<Exclude<ImageFormat, 'best'>, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', tiff: 'image/tiff' };

/** The contents of one entity's image or blob attribute. */
export async function readFile(scope: Scope, action: Extract<Action, { kind: 'readFile' }>): Promise<RestResponse> {
  const { attribute: attr, headers } = action;
  const files = scope.core.files;
  const entity = await findEntity(scope, action.dc, action.selector);
  const id = entity.get(attr.name);
  const file = id === null || id === undefined ? undefined : await files.info(Number(id));
  if (!file) return fileAnswer(204, {}, null);
  const target = action.imageFormat === undefined || action.imageFormat === 'best' || MIME[action.imageFormat] === file.mime ? undefined : action.imageFormat;
  const etag = `"${file.id}-${target ?? 'stored'}"`;
  // Stored content is the clients' own: never sniffed into something else, and never run as a
  // page (an SVG with a script, opened directly, runs in a sandbox without scripts). Kept by the
  // browser only (revalidated by its ETag): what a session may see is no shared cache's to keep.
  const common: Record<string, string> = { etag, 'cache-control': 'private, no-cache', 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox" };
  const type = target ? MIME[target] : file.mime;
  // what a browser would run as a page (an SVG, XML, HTML) is only ever a download
  if (action.download || ACTIVE.has(type)) common['content-disposition'] = `attachment; filename="${attr.name}${extension(type)}"`;
  if (matches(headers['if-none-match'], etag)) return fileAnswer(304, common, null);
  if (!target) {
    const original = { ...common, 'content-type': file.mime, 'accept-ranges': 'bytes' };
    const range = byteRange(headers.range, headers['if-range'], etag, file.size);
    if (range === 'unsatisfiable') {
      const error = new DatasetError('RANGE_NOT_SATISFIABLE', `the Range ${String(headers.range)} is outside the ${file.size} bytes of ${action.dc.name}.${attr.name}`);
      return fileAnswer(416, { 'content-type': 'application/json; charset=utf-8', 'content-range': `bytes */${file.size}` }, Buffer.from(JSON.stringify({ [WIRE.ERROR]: error.toWire() })));
    }
    if (range) {
      const [start, end] = range;
      return fileAnswer(206, { ...original, 'content-range': `bytes ${start}-${end}/${file.size}`, 'content-length': String(end - start + 1) }, fileStream(bytes(files, file, start, end)));
    }
    return fileAnswer(200, { ...original, 'content-length': String(file.size) }, fileStream(bytes(files, file, 0, file.size - 1)));
  }
  // (a client's share and the queue's bound: rest/scope/conversions.ts. A client is a user, whatever
  // its sessions, or a guest's address: a stored guest costs a request, and one address holds a
  // hundred — keyed by session, one address had the whole queue)
  const client = scope.session.userName !== '' ? `user:${scope.session.userName}` : `address:${scope.request.caller}`;
  const converted = await scope.services.conversions.run(client, () => convert(files, file, target));
  if (!converted) return fileAnswer(204, {}, null); // 4D: an empty answer when the format is not possible
  return fileAnswer(200, { ...common, 'content-type': MIME[target], 'content-length': String(converted.length) }, converted);
}

/** The image in another format, or undefined when it cannot be made (not an image sharp reads, or past MAX_CONVERTED_PIXELS). */
async function convert(files: FileStore, file: StoredFile, format: Exclude<ImageFormat, 'best'>): Promise<Buffer | undefined> {
  // (sharp loaded at the first conversion: most processes never convert, and it costs a start ~0.3 s)
  const { default: sharp } = await import('sharp');
  try {
    const pipeline = sharp({ limitInputPixels: MAX_CONVERTED_PIXELS }).toFormat(format);
    Readable.from(files.chunks(file.id)).pipe(pipeline);
    return await pipeline.toBuffer();
  } catch {
    return undefined;
  }
}

/** A file's chunks as a stream that reads one chunk ahead of the socket (Readable.from would buffer 16: 4 MB a download). */
function fileStream(chunks: AsyncGenerator<Buffer>): Readable {
  return Readable.from(chunks, { highWaterMark: 1 });
}

/**
 * Bytes start…end (inclusive) of a file, read from the chunk that holds `start`, checked to add up:
 * a file replaced (and removed) while it is sent ends the stream with an error, so the connection
 * is closed rather than left waiting for the bytes Content-Length promised.
 */
async function* bytes(files: FileStore, file: StoredFile, start: number, end: number): AsyncGenerator<Buffer> {
  const first = Math.floor(start / FILE_CHUNK);
  let at = first * FILE_CHUNK; // the file offset of the next chunk
  let sent = 0;
  const wanted = Math.max(0, end - start + 1);
  for await (const chunk of files.chunks(file.id, first)) {
    const piece = chunk.subarray(Math.max(0, start - at), Math.min(chunk.length, end - at + 1));
    at += chunk.length;
    sent += piece.length;
    if (piece.length) yield piece;
    if (sent >= wanted) break; // the chunk after the last byte is never read
  }
  if (sent !== wanted) throw new Error(`file ${file.id} changed while it was sent (${sent} of ${wanted} bytes)`);
}

/**
 * A single byte range of a Range header (`bytes=a-b`, `bytes=a-`, `bytes=-n`), or undefined to send
 * the whole file: no header, several ranges, another unit, or an If-Range naming another version.
 */
function byteRange(header: string | string[] | undefined, ifRange: string | string[] | undefined, etag: string, size: number): [number, number] | 'unsatisfiable' | undefined {
  if (typeof header !== 'string' || (ifRange !== undefined && ifRange !== etag)) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2])); // the last n bytes
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (m[1] !== '' && m[2] !== '' && Number(m[2]) < Number(m[1])) return undefined; // a-b with b < a is no range: ignored (RFC 9110)
  if (start >= size || (m[1] === '' && Number(m[2]) === 0)) return 'unsatisfiable';
  return [start, end];
}

const ACTIVE = new Set(['image/svg+xml', 'text/html', 'application/xhtml+xml', 'application/xml', 'text/xml']);

/** If-None-Match: a list of tags, or * */
function matches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = (Array.isArray(header) ? header.join(',') : header).split(',').map((t) => t.trim().replace(/^W\//, ''));
  return tags.includes('*') || tags.includes(etag);
}

const EXTENSIONS: Record<string, string> = {
  'image/png': '.png', 'image/jpeg': '.jpg', 'image/gif': '.gif', 'image/tiff': '.tiff', 'image/webp': '.webp', 'image/svg+xml': '.svg', 'image/bmp': '.bmp',
  'application/pdf': '.pdf', 'text/plain': '.txt', 'application/zip': '.zip',
};

function extension(mime: string): string {
  return EXTENSIONS[mime] ?? '';
}
