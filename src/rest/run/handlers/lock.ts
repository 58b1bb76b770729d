// $lock=true / $lock=false (reference §3.13): the session's pessimistic lock on one entity, taken
// or released by the datastore core (datastore/sessions/locks.ts), answered in 4D's shape:
// {"result": true|false, "__STATUS": {…}}. Refused or not, the answer is a 200: `result` says
// whether the lock was taken (4D's documentation shows the refusal as an answer, not an error).

import { WIRE } from '../../../config/wire.js';
import { lockEntity, unlockEntity } from '../../../datastore/index.js';
import { requireKey } from '../../../model/values.js';
import type { Action } from '../../plan/action.js';
import { findEntity } from '../collections.js';
import { json, type RestResponse } from '../../present/response.js';
import type { Scope } from '../../scope/scope.js';

export async function lock(scope: Scope, action: Extract<Action, { kind: 'lock' }>): Promise<RestResponse> {
  const { dc, selector } = action;
  // a key is read by the lock itself (status 5 when no entity has it); an attribute's value names
  // an entity found first (1542 when none has it)
  const key = selector.kind === 'key' ? requireKey(dc.model.key, selector.key) : (await findEntity(scope, dc, selector)).getKey();
  const headers = scope.request.headers;
  // (a GET from another origin's page is refused before: pipeline.ts refuseForeignEffect)
  const status = action.lock
    ? await lockEntity(dc, key, scope.access, { address: scope.request.caller, host: text(headers.host), userAgent: text(headers['user-agent']) }, scope.services.locksPerSession)
    : await unlockEntity(dc, key, scope.access);
  // (4D's REST answer has `success` only on success; entity.lock()'s status object has it always)
  const { success, ...refusal } = status;
  return json({ result: success, [WIRE.STATUS]: success ? status : refusal });
}

function text(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v) ?? '';
}
