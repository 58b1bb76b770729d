// POST /rest/$upload?$rawPict=true (an image) or ?$binary=true (any file): the raw body is
// streamed into the database, one stored chunk at a time, and answered with {"ID": "<32 hex>"};
// a $method=update attaches it by that id until $timeout seconds (default 120) have passed.
// Too many bytes (--max-upload-size) answer 413 as soon as they are known; bytes announced as an
// image that are none answer 400; an upload cut off leaves nothing behind.

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_TIMEOUT_S } from '../../config/limits.js';
import type { Datastore } from '../../datastore/datastore.js';
import { formatBytes } from '../../datastore/files.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { parseOptions } from '../options.js';

/** How long an upload waits to be attached, without $timeout (spec "Limits"). */
export const DEFAULT_UPLOAD_TIMEOUT_S = 120;
/** The largest upload accepted, without --max-upload-size. */
export const DEFAULT_MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
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
  const announced = Number(request.headers['content-length'] ?? Number.NaN);
  if (announced > maxBytes) {
    throw new DatasetError('BODY_TOO_LARGE', `the upload is ${announced} bytes, more than the ${formatBytes(maxBytes)} this server accepts (--max-upload-size)`);
  }
  // the moment to sweep what expired: uploads are where files come from
  await ds.files.sweep();
  const id = randomBytes(16).toString('hex').toUpperCase();
  const timeout = Math.min(opts.timeout ?? DEFAULT_UPLOAD_TIMEOUT_S, MAX_TIMEOUT_S);
  const file = await ds.files.store(request, { kind: opts.rawPict ? 'image' : 'binary', expires: Date.now() + timeout * 1000, upload: id, maxBytes });
  if (file.size === 0) {
    await ds.files.remove(file.id);
    throw new DatasetError('INVALID_BODY', 'the upload is empty: send the file\'s bytes as the request body');
  }
  return { ID: id };
}
