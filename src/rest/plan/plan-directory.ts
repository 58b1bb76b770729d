// Planning /rest/$directory/…, 4D's legacy login (what wakanda-client's directory sends): the
// credentials of a login (from the JSON body [user, password, seconds], or 4D's headers
// username-4D, password-4D and session-4D-length in minutes), and the group a belongs-to asks about.

import { MAX_SESSION_IDLE_MINUTES } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Action, DirectoryRequest, RequestHeaders } from './action.js';
import type { RestRequest } from './request.js';
import type { DirectoryName } from '../request/url.js';

/** The HTTP methods each $directory resource takes (4D's, and POST wherever a client might post). */
const METHODS: Record<DirectoryName, readonly string[]> = {
  login: ['POST'],
  // (not HEAD: a logout changes the session, and HEAD must change nothing)
  logout: ['GET', 'POST'],
  currentUser: ['GET', 'HEAD', 'POST'],
  currentUserBelongsTo: ['POST'],
};

export function planDirectory(req: RestRequest, name: DirectoryName): Action {
  if (!METHODS[name].includes(req.method)) {
    throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on $directory/${name}: use ${METHODS[name].filter((m) => m !== 'HEAD').join(' or ')}`);
  }
  return { kind: 'directory', request: directoryRequest(req, name) };
}

function directoryRequest(req: RestRequest, name: DirectoryName): DirectoryRequest {
  switch (name) {
    case 'login':
      return req.body === undefined ? fromHeaders(req.headers) : fromBody(req.body);
    case 'currentUserBelongsTo': {
      const group = Array.isArray(req.body) && req.body.length === 1 ? req.body[0] : undefined;
      if (typeof group !== 'string' || group === '') {
        throw new DatasetError('INVALID_BODY', `$directory/currentUserBelongsTo takes a JSON array holding one group name, like ["Editor"]; got ${JSON.stringify(req.body)?.slice(0, 60) ?? 'no body'}`);
      }
      return { name, group };
    }
    default:
      return { name };
  }
}

/** [user, password] or [user, password, seconds] (wakanda-client's duration, in seconds). */
function fromBody(body: unknown): DirectoryRequest {
  const usage = 'the body of $directory/login is a JSON array [userName, password] or [userName, password, sessionSeconds]';
  if (!Array.isArray(body) || body.length < 2 || body.length > 3) throw new DatasetError('INVALID_BODY', `${usage}; got ${JSON.stringify(body).slice(0, 60)}`);
  const [userName, password, seconds] = body as unknown[];
  if (typeof userName !== 'string' || userName === '') throw new DatasetError('INVALID_BODY', `${usage}: the user name (#1) is a non-empty string, got ${JSON.stringify(userName)}`);
  if (typeof password !== 'string') throw new DatasetError('INVALID_BODY', `${usage}: the password (#2) is a string, got ${typeof password}`);
  if (seconds === undefined || seconds === null) return { name: 'login', userName, password };
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_SESSION_IDLE_MINUTES * 60) {
    throw new DatasetError('INVALID_BODY', `${usage}: the session's length (#3) is a number of seconds above 0 and at most ${MAX_SESSION_IDLE_MINUTES * 60} (a week), got ${JSON.stringify(seconds)}`);
  }
  return { name: 'login', userName, password, idleMinutes: seconds / 60 };
}

/**
 * A header's value as its sender wrote it: Node reads header bytes as Latin-1, so a UTF-8 name
 * (Zoë) arrives as ZoÃ«; bytes that are valid UTF-8 are read as such (the body's form and the
 * failed-login count then see the same name).
 */
function utf8(value: string | undefined): string | undefined {
  if (value === undefined || !/[\x80-\xff]/.test(value)) return value;
  const raw = Buffer.from(value, 'latin1');
  const text = raw.toString('utf8');
  return Buffer.from(text, 'utf8').equals(raw) ? text : value;
}

/** 4D's headers: username-4D, password-4D, session-4D-length (minutes). */
function fromHeaders(headers: RequestHeaders): DirectoryRequest {
  const header = (name: string) => {
    const v = headers[name];
    return utf8(Array.isArray(v) ? v[0] : v);
  };
  if (header('hashed-password-4d') !== undefined) {
    throw new DatasetError('INVALID_BODY', "$directory/login: hashed-password-4D (4D's own digest) is not supported; send the password in password-4D, over HTTPS");
  }
  const userName = header('username-4d');
  const password = header('password-4d');
  if (userName === undefined || userName === '' || password === undefined) {
    throw new DatasetError('INVALID_BODY', '$directory/login takes the credentials as a JSON body [userName, password, sessionSeconds] or in the headers username-4D and password-4D (and session-4D-length, in minutes)');
  }
  const length = header('session-4d-length');
  if (length === undefined) return { name: 'login', userName, password };
  const minutes = Number(length);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(length) || minutes <= 0 || minutes > MAX_SESSION_IDLE_MINUTES) {
    throw new DatasetError('INVALID_BODY', `$directory/login: session-4D-length is a number of minutes above 0 and at most ${MAX_SESSION_IDLE_MINUTES} (a week), got '${length.slice(0, 40)}'`);
  }
  return { name: 'login', userName, password, idleMinutes: minutes };
}
