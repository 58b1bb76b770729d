// Entity sets over REST: $method=entityset on a collection (the whole selection stored, its first
// page answered), GET /rest/{dc}/$entityset/{id} (pages of the stored keys; filtered, sorted,
// combined, cleaned: stored anew with $method=entityset), release, delete, and $info. What is
// done with sets, and which sets and members a session may use, is the core's (datastore/sets/:
// entity-sets.ts, session-sets.ts); this file maps the options onto it.

import { ADMIN_PRIVILEGE, DEFAULT_SET_TIMEOUT_S, MAX_LISTED_SESSIONS } from '../../../config/limits.js';
import { type EntitySelection, isoSeconds, type SessionInfo, setNotFound } from '../../../datastore/index.js';
import type { Action } from '../../plan/action.js';
import { narrow, resolveSet, selectionOf } from '../collections.js';
import { projectionFor, setPageAnswer } from '../../present/present.js';
import { json, type RestResponse } from '../../present/response.js';
import { inSnapshot, setsOf, type Scope } from '../../scope/scope.js';
import { pageSize } from '../../../model/types.js';

export async function createSet(scope: Scope, action: Extract<Action, { kind: 'createSet' }>): Promise<RestResponse> {
  const selection = narrow(scope, (await selectionOf(scope, action.dc, action.source)) as EntitySelection, action.narrowing);
  const set = await setsOf(scope).create(selection, action.timeoutS ?? DEFAULT_SET_TIMEOUT_S);
  // (a page of more than one statement is read in one snapshot: the core's readSetPage)
  return setPageAnswer(scope, action.dc.model, set, action.paging, action.shape, true);
}

export async function readSet(scope: Scope, action: Extract<Action, { kind: 'readSet' }>): Promise<RestResponse> {
  const { dc } = action;
  // a page of the set as it is: its members for the page only (a set too large to keep whole is
  // not read whole), written in one statement; anything else (combined, cleaned, filtered, sorted,
  // stored, rebuilt, seen through a row filter) takes the whole set
  const { set, narrowing, paging } = action;
  if (!set.logic && !set.clean && !narrowing.filter && !narrowing.orderBy && !action.store && scope.access.restrict?.(dc.model) == null) {
    const top = paging.top ?? pageSize(dc.model);
    const slice = await setsOf(scope).slice(set.id, paging.skip, paging.skip + top);
    if (slice && slice.set.dataClass === dc.name) {
      // (a page of more than one statement reads them in one snapshot: the core's readSetPage)
      return setPageAnswer(scope, dc.model, { id: set.id, keys: slice.keys, from: slice.from, size: slice.set.size }, paging, action.shape, false);
    }
  }
  return inSnapshot(scope, (s) => setAnswer(s, action));
}

/** The set as the request defines it, read in one snapshot with its page. */
async function setAnswer(scope: Scope, action: Extract<Action, { kind: 'readSet' }>): Promise<RestResponse> {
  const { dc } = action;
  const resolved = await resolveSet(scope, dc, action.set);
  if ('intersects' in resolved) return json(resolved.intersects);
  let { keys, sorted } = resolved;
  if (action.narrowing.filter || action.narrowing.orderBy) {
    const sets = setsOf(scope);
    const narrowed = await sets.narrowed(keys, narrow(scope, sets.members(dc, keys), action.narrowing));
    keys = narrowed.keys;
    sorted ||= narrowed.ordered;
  }
  if (action.store) {
    const stored = await setsOf(scope).store(dc.name, keys, sorted, action.timeoutS ?? DEFAULT_SET_TIMEOUT_S);
    return setPageAnswer(scope, dc.model, stored, action.paging, action.shape, true);
  }
  // a read of a set, as it is or filtered, sorted, combined, stores nothing: no __ENTITYSET (4D's
  // answer carries one only when the request stores a set: here, one made again from $savedfilter)
  const rebuiltAsIs = resolved.rebuilt && keys === resolved.set.keys;
  return setPageAnswer(scope, dc.model, { id: resolved.set.id, keys }, action.paging, action.shape, rebuiltAsIs);
}

export async function release(scope: Scope, action: Extract<Action, { kind: 'release' }>): Promise<RestResponse> {
  projectionFor(action.dc.model, action.shape, scope); // an unknown attribute is a mistake: answered before the set goes
  if (!(await setsOf(scope).release(action.id))) throw setNotFound(action.id);
  return json({ ok: true });
}

/** POST /rest/$entityset/$release with a JSON array of ids: every one released, or 1802 naming the unknown ones. */
export async function releaseSets(scope: Scope, action: Extract<Action, { kind: 'releaseSets' }>): Promise<RestResponse> {
  const unknown: string[] = [];
  const sets = setsOf(scope);
  for (const id of new Set(action.ids)) if (!(await sets.release(id))) unknown.push(id);
  if (unknown.length > 0) throw setNotFound(unknown.join('", "'));
  return json({ ok: true });
}

/** POST /rest/{dc}/$entityset/{id}?$method=delete: drops every member through the core (events run), in one transaction. */
export async function deleteSet(scope: Scope, action: Extract<Action, { kind: 'deleteSet' }>): Promise<RestResponse> {
  await setsOf(scope).drop(action.dc, action.id);
  return json({ ok: true });
}

/**
 * GET /rest/$info: the entity sets alive now, the caller's session (its id, user name, privileges
 * and expiry) and, for a session holding the administrator privilege (ADMIN_PRIVILEGE), every
 * live session; `privileges` lists the caller's as 4D does.
 */
export async function info(scope: Scope): Promise<RestResponse> {
  const session = scope.session;
  const admin = session.hasPrivilege(ADMIN_PRIVILEGE);
  // a session sees its own sets (and may use only those), an administrator (or anyone, without roles.json) every one
  const sets = await setsOf(scope).list();
  const own: SessionInfo = {
    sessionID: session.id, userName: session.userName, privileges: session.getPrivileges(), lifeTime: session.idleTimeout * 60, expiration: isoSeconds(Date.parse(session.expirationDate)),
  };
  const others = admin ? (await scope.core.sessions.list(MAX_LISTED_SESSIONS)).filter((s) => s.sessionID !== own.sessionID) : [];
  return json({
    entitySetCount: sets.length,
    entitySet: sets.map((s) => ({
      id: s.id,
      dataClass: s.dataClass,
      selectionSize: s.size,
      sorted: s.sorted,
      refreshed: isoSeconds(s.refreshed),
      expires: isoSeconds(s.refreshed + s.timeoutMs),
    })),
    session: own,
    sessionInfo: [own, ...others],
    privileges: { privileges: session.getPrivileges().map((privilege) => ({ privilege })) },
  });
}
