// POST /rest/$upload?$rawPict=true (an image) or ?$binary=true (any file): the raw body is
// streamed into the database, one stored chunk at a time, and answered with {"ID": "<32 hex>"};
// a $method=update attaches it by that id until $timeout seconds (default 120) have passed.
// Too many bytes (--max-upload-size) answer 413 as soon as they are known; bytes announced as an
// image that are none answer 400; an upload cut off leaves nothing behind. (The options and the
// announced size are checked by the request stage, before the body is read.)

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Action } from '../action.js';
import { json, type RestResponse } from '../response.js';
import type { Scope } from '../scope.js';

/** Stores the body of an upload request; answers its id. */
export async function upload(scope: Scope, action: Extract<Action, { kind: 'upload' }>, body: IncomingMessage): Promise<RestResponse> {
  const files = scope.core.files;
  // the moment to sweep what expired: uploads are where files come from
  await files.sweep();
  const id = randomBytes(16).toString('hex').toUpperCase();
  let file;
  try {
    file = await files.store(body, { kind: action.fileKind, expiresIn: action.timeoutS * 1000, upload: id, maxBytes: scope.maxUploadBytes });
  } catch (e) {
    // the client went away mid-body: an expected end, not a server error (store() kept nothing)
    if (!(e instanceof DatasetError) && (body.destroyed || !body.complete)) throw new DatasetError('INVALID_BODY', 'the upload was cut off before its end');
    throw e;
  }
  if (file.size === 0) {
    await files.remove(file.id);
    throw new DatasetError('INVALID_BODY', 'the upload is empty: send the file\'s bytes as the request body');
  }
  return json({ ID: id });
}
