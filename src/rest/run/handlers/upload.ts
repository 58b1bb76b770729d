// POST /rest/$upload?$rawPict=true (an image) or ?$binary=true (any file): the raw body is
// streamed into the database, one stored chunk at a time, and answered with {"ID": "<32 hex>"};
// a $method=update attaches it by that id until $timeout seconds (default 120) have passed.
// POST /rest/{dc}({key})/{attribute}?$rawPict=<type> or ?$binary=true (wakanda-client's media
// upload) streams it the same way, then saves it into that attribute as an update would.
// Too many bytes (--max-upload-size) answer 413 as soon as they are known; bytes announced as an
// image that are none answer 400; an upload cut off leaves nothing behind. (The options and the
// announced size are checked by the request stage, before the body is read.)

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DatasetError } from '../../../errors/dataset-error.js';
import type { FileKind, StoredFile } from '../../../datastore/index.js';
import type { Action } from '../../plan/action.js';
import { findEntity } from '../collections.js';
import { entityBody, projectionFor } from '../../present/present.js';
import { json, type RestResponse } from '../../present/response.js';
import type { Scope } from '../../scope/scope.js';

/** Stores the body of an upload request; answers its id. */
export async function upload(scope: Scope, action: Extract<Action, { kind: 'upload' }>, body: IncomingMessage): Promise<RestResponse> {
  const id = randomBytes(16).toString('hex').toUpperCase();
  await storeBody(scope, body, action.fileKind, action.timeoutS * 1000, id);
  return json({ ID: id });
}

/**
 * Stores the body into an image or blob attribute of one entity and saves it as an update
 * without a stamp (the client sends none): its events run, its stamp moves, the file it replaces
 * goes; answers the entity. The entity and the answer's attributes are checked before a byte is
 * read, and the entity is read again once the bytes are in (a save of it meanwhile is no
 * conflict); a save that fails leaves the file to the sweep.
 */
export async function storeFile(scope: Scope, action: Extract<Action, { kind: 'storeFile' }>, body: IncomingMessage): Promise<RestResponse> {
  await findEntity(scope, action.dc, action.selector);
  projectionFor(action.dc.model, action.shape, scope);
  const file = await storeBody(scope, body, action.fileKind, STORED_FILE_CLAIM_MS);
  const entity = await findEntity(scope, action.dc, action.selector);
  entity.set(action.attribute.name, file);
  await entity.save();
  return json(await entityBody(scope, entity, action.shape));
}

/** How long a file stored for one entity's attribute waits for that entity's save to claim it. */
const STORED_FILE_CLAIM_MS = 60_000;

/** Streams a request body into the file store (refused when empty, cut off, or past the size limit). */
async function storeBody(scope: Scope, body: IncomingMessage, kind: FileKind, expiresIn: number, upload?: string): Promise<StoredFile> {
  const files = scope.core.files;
  // the moment to sweep what expired: uploads are where files come from (at most once a second)
  await files.sweepForUpload();
  let file;
  try {
    // (who waits for them: the quotas of pending uploads count by the session, or a guest's address)
    file = await files.store(body, { kind, expiresIn, upload, maxBytes: scope.maxUploadBytes, owner: scope.caller, quota: scope.services.uploadQuota });
  } catch (e) {
    // the client went away mid-body: an expected end, not a server error (store() kept nothing)
    if (!(e instanceof DatasetError) && (body.destroyed || !body.complete)) throw new DatasetError('INVALID_BODY', 'the upload was cut off before its end');
    throw e;
  }
  if (file.size === 0) {
    await files.remove(file.id);
    throw new DatasetError('INVALID_BODY', 'the upload is empty: send the file\'s bytes as the request body');
  }
  return file;
}
