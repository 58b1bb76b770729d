// POST /rest/$upload?$rawPict=true (an image) or ?$binary=true (any file): the raw body is
// streamed into the database, one stored chunk at a time, and answered with {"ID": "<32 hex>"};
// a $method=update attaches it by that id until $timeout seconds (default 120) have passed.
// Too many bytes (--max-upload-size) answer 413 as soon as they are known; bytes announced as an
// image that are none answer 400; an upload cut off leaves nothing behind.

import { DEFAULT_UPLOAD_TIMEOUT_S, MAX_UPLOAD_TIMEOUT_S } from '../../config/limits.js';
import { randomBytes } from 'node:crypto';
import bytes from 'bytes';
import type { IncomingMessage } from 'node:http';
import type { Datastore } from '../../datastore/datastore.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { parseOptions } from '../options.js';

/** An upload id: 32 hexadecimal digits (answered upper-case, accepted in any case). */
export const UPLOAD_ID = /^[0-9A-Fa-f]{32}$/;

const UPLOAD_OPTIONS = new Set(['$rawPict', '$binary', '$timeout']);

/** Stores the body of an upload request; resolves to its id. */
export async function upload(ds: Datastore, request: IncomingMessage, maxBytes: number): Promise<{ ID: string }> {
  const url = request.url ?? '';
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const opts = parseOptions(query);
  const others = [...new URLSearchParams(query).keys()].filter((k) => k.startsWith('$') && !UPLOAD_OPTIONS.has(k));
  if (others.length > 0) throw new DatasetError('INVALID_OPTION', `$upload takes $rawPict, $binary and $timeout; ${others.join(', ')} ${others.length === 1 ? 'does' : 'do'} not apply`);
  if (opts.rawPict === opts.binary) {
    throw new DatasetError('INVALID_OPTION', opts.rawPict ? 'an upload is an image ($rawPict=true) or any other file ($binary=true), not both' : 'say what the upload is: $rawPict=true for an image, $binary=true for any other file');
  }
  const refused = tooLarge(request, maxBytes);
  if (refused) throw refused;
  // a form's envelope is not the file: storing it would corrupt the upload silently
  if (/^multipart\//i.test(String(request.headers['content-type'] ?? ''))) {
    throw new DatasetError('INVALID_BODY', 'the upload is the file\'s bytes as the request body, not a multipart form: send them as they are (curl --data-binary @file)');
  }
  const timeout = opts.timeout ?? DEFAULT_UPLOAD_TIMEOUT_S;
  if (timeout > MAX_UPLOAD_TIMEOUT_S) throw new DatasetError('LIMIT_EXCEEDED', `$timeout=${timeout}: an upload waits at most ${MAX_UPLOAD_TIMEOUT_S} seconds (a day) to be attached`);
  // the moment to sweep what expired: uploads are where files come from
  await ds.files.sweep();
  const id = randomBytes(16).toString('hex').toUpperCase();
  let file;
  try {
    file = await ds.files.store(request, { kind: opts.rawPict ? 'image' : 'binary', expiresIn: timeout * 1000, upload: id, maxBytes });
  } catch (e) {
    // the client went away mid-body: an expected end, not a server error (store() kept nothing)
    if (!(e instanceof DatasetError) && (request.destroyed || !request.complete)) throw new DatasetError('INVALID_BODY', 'the upload was cut off before its end');
    throw e;
  }
  if (file.size === 0) {
    await ds.files.remove(file.id);
    throw new DatasetError('INVALID_BODY', 'the upload is empty: send the file\'s bytes as the request body');
  }
  return { ID: id };
}

/** BODY_TOO_LARGE for an upload whose announced length is past the limit (checked before reading, and before answering Expect: 100-continue). */
export function tooLarge(request: IncomingMessage, maxBytes: number): DatasetError | undefined {
  const announced = Number(request.headers['content-length'] ?? Number.NaN);
  if (!(announced > maxBytes)) return undefined;
  return new DatasetError('BODY_TOO_LARGE', `the upload is ${announced} bytes, more than the ${bytes.format(maxBytes, { unitSeparator: ' ' })} this server accepts (--max-upload-size)`);
}

/** Is this request target the upload resource? */
export function isUploadTarget(url: string | undefined): boolean {
  return /^\/rest\/\$upload\/?(\?|$)/.test(url ?? '');
}
