// The events of a watch (issue 36), as a stream (handlers/watch.ts) and a webhook (rest/webhooks/)
// send them: the core's change feed says which entities of a dataclass changed, with their stamps;
// each batch is judged as the watcher's session sees it at that moment — a fresh scope (its
// privileges now, restrict(), attribute permissions) and the watch's filter — by reading the
// changed entities through the core.

import { WIRE } from '../../config/wire.js';
import { type Change, type DataClassCore, type Entity, queryWith, type Session, sessionInternals } from '../../datastore/index.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { INTEGER_TYPES } from '../../model/types.js';
import type { Action } from '../plan/action.js';
import { entityBody } from '../present/present.js';
import { scopeFor, setsOf, type Scope } from '../scope/scope.js';

/** What a watch follows and how it shows it: a planned $method=watch. */
export type WatchSpec = Pick<Extract<Action, { kind: 'watch' }>, 'dc' | 'target' | 'shape'>;

/** One event: its kind, its data, and the stamp it closes (the last event of a stamp carries it). */
export interface ChangeEvent {
  readonly event: 'entity' | 'remove';
  readonly id: number | undefined;
  readonly data: Record<string, unknown>;
}

/**
 * One batch of changes as `scope`'s session sees them now — its privileges as they stand, its
 * row filters, the watch's filter — as events in stamp order: `entity` (shaped as a read of the
 * watch's URL) for what it shows, `remove` for what it does not (dropped, out of the filter,
 * hidden), `id` on the last event of each stamp. Or why there are none to come: the session
 * ended, or the watched set is gone.
 */
export async function changeEvents(scope: Scope, watch: WatchSpec, batch: readonly Change[]): Promise<ChangeEvent[] | 'session ended' | 'set gone'> {
  if (batch.length === 0) return [];
  const session = await liveSession(scope);
  if (!session) return 'session ended';
  // the session as it is now: its privileges, its row filters (and a budget of its own)
  const now = scopeFor(scope.services, scope.request, session);
  const changes = watch.target.kind === 'set' ? await setMembersAmong(now, watch.target.id, watch.dc, batch) : batch;
  if (!changes) return 'set gone';
  const saved = changes.filter((c) => !c.dropped).map((c) => c.key);
  const shown = new Map<string, Entity>();
  if (saved.length > 0) {
    try {
      for (const e of await selectionOf(now, watch, saved).toArray()) shown.set(String(e.getKey()), e);
    } catch (e) {
      // the session may no longer read the dataclass (or its filter's attributes): it sees nothing
      // of it; any other failure (the database busy, gone) is no reason to remove anything
      if (!(e instanceof DatasetError) || (e.status !== 401 && e.status !== 403)) throw e;
    }
  }
  const events: ChangeEvent[] = [];
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i];
    const id = i === changes.length - 1 || changes[i + 1].stamp !== c.stamp ? c.stamp : undefined;
    const entity = c.dropped ? undefined : shown.get(String(c.key));
    if (entity) {
      const data = (await entityBody(now, entity, watch.shape)) as Record<string, unknown>;
      if (watch.target.kind !== 'entity') delete data.__entityModel;
      events.push({ event: 'entity', id, data });
    } else events.push({ event: 'remove', id, data: { [WIRE.KEY]: String(c.key) } });
  }
  return events;
}

/** The entities the watch shows among `keys` (all of its query without them), as `scope` sees them. */
export function selectionOf(scope: Scope, action: WatchSpec, keys: readonly unknown[] | undefined) {
  const { dc } = action;
  const base = keys === undefined ? dc.selectWhere(null, scope.access) : setsOf(scope).members(dc, keyList(dc, keys));
  if (action.target.kind === 'entity') return base;
  // (a set's members: the changed keys were kept to them already, see members())
  const { filter, params } = action.target.narrowing;
  return filter ? queryWith(base, filter, params, scope.visible) : base;
}

function keyList(dc: DataClassCore, keys: readonly unknown[]) {
  return INTEGER_TYPES.has(dc.model.key.type) ? Float64Array.from(keys as number[]) : keys.map(String);
}

/**
 * Whether what changed since `since` may be gone: __DeletedRecords is bounded (model.json's
 * deletedRecordsRetention) and keeps no drop as old as `since`.
 */
export async function replayLost(scope: Scope, since: number): Promise<boolean> {
  const keep = scope.ds.model.deletedRecordsRetention;
  const deleted = scope.ds.model.deletedRecords;
  if (!keep || !deleted) return false;
  if (keep.stamps !== undefined) return since < (await scope.ds.getGlobalStamp()) - keep.stamps;
  const oldest = await scope.ds.dataClass(deleted.name)?.all().min('__Stamp');
  return typeof oldest === 'number' && oldest > since + 1;
}

/**
 * The watcher's session as it stands now (a stored one read again: its privileges as another
 * request may have changed them), or undefined once it has ended — logged out, expired, replaced
 * by a login's new one — which ends the stream.
 */
export async function liveSession(scope: Scope): Promise<Session | undefined> {
  if (!sessionInternals.stored(scope.session)) return scope.session;
  const now = await scope.core.sessions.open(sessionInternals.token(scope.session));
  return sessionInternals.id(now) === sessionInternals.id(scope.session) ? now : undefined;
}

/**
 * The changes of a set's members (a set keeps the entities it was made of: no other enters it),
 * or undefined when the set is gone (released, expired): the stream ends.
 */
export async function setMembersAmong(scope: Scope, id: string, dc: DataClassCore, changes: readonly Change[]): Promise<readonly Change[] | undefined> {
  const set = await setsOf(scope).find(id);
  if (!set || set.dataClass !== dc.name) return undefined;
  const changed = new Set(changes.map((c) => String(c.key)));
  const kept = new Set<string>();
  // (one pass over the set's keys: a batch is small, a set may be large)
  for (const key of set.keys) {
    const text = String(key);
    if (changed.has(text)) kept.add(text);
  }
  return changes.filter((c) => kept.has(String(c.key)));
}

