// The watch streams of a server, grouped (issue 36's scale: a thousand streams, 500 changes a
// second). Streams that would see the same events — the same dataclass, target (filter and
// parameters, entity, set), $attributes, and viewer (one stored session; or, for a session not
// stored, its user and privileges: what restrict() and the grants depend on) — form one group:
// one subscription to the core's change feed, one judgement and one text of each batch, written
// to each of its streams. And a batch is judged for every group of one viewer on a dataclass at
// once: the changed entities are read in one statement with a column per group's filter
// (datastore/reads/entities-within.ts) — the database matches the filters; their cost grows with the
// changes and the distinct filters, not with the streams.
//
// A query's group knows which entities its selection holds (`members`, read when it starts, kept
// by its events): `remove` goes only for an entity that was in it (left the filter, hidden,
// dropped), not for every change elsewhere. Until that read's stamp (and for a group too big to
// keep, a set's or an entity's) it sends `remove` for every change it does not show: the client
// ignores those for keys it never had.

import { HEARTBEAT_MS } from '../../../config/limits.js';
import { WIRE } from '../../../config/wire.js';
import { type ChangeBatch, type Change, type DataClassCore, entitiesWithin, type EntitySelection, type EntityWithin, judgedByOwnValues, queryWith, rowsRestricted, sessionInternals, type Subscription } from '../../../datastore/index.js';
import { DatasetError } from '../../../errors/dataset-error.js';
import type { Action } from '../../plan/action.js';
import { entityBody } from '../../present/present.js';
import { scopeFor, setsOf, type Scope } from '../../scope/scope.js';
import { liveSession, setMembersAmong } from '../change-events.js';

type WatchAction = Extract<Action, { kind: 'watch' }>;

/** A query group keeps the keys of its selection up to this many (a bigger one sends a remove for each change it does not show). */
const MAX_GROUP_MEMBERS = 10_000;
/** …and the groups of a server keep this many keys in all (about 40 MB). */
const MAX_MEMBERS_IN_ALL = 500_000;

/** How a stream is written and ended (handlers/watch.ts makes one per stream). */
export interface WatchSink {
  send(text: string): void;
  end(last?: string): void;
}

export const RESETS = {
  failed: 'event: reset\ndata: {"reason":"the server could not follow the changes: read again"}\n\n',
  sessionEnded: 'event: reset\ndata: {"reason":"the session ended (logged out, expired or replaced by a login)"}\n\n',
  setGone: 'event: reset\ndata: {"reason":"the entity set was released or expired"}\n\n',
} as const;

/** What one viewer sees of one batch: the changed entities it sees now, with which of its groups' filters hold them. */
interface Judged {
  readonly scope: Scope;
  readonly found: Map<string, EntityWithin>;
  /** each group's place among the filters (`within`) */
  readonly index: Map<WatchGroup, number>;
  /** the groups whose filter could not be matched (its statement failed alone) */
  readonly failed: ReadonlySet<WatchGroup>;
  /** each shape's text of each entity, made once */
  readonly bodies: Map<string, Map<string, Promise<string>>>;
  /** the batch's changes, and their keys as text (made once for every group) */
  readonly changes: readonly Change[];
  readonly texts: readonly string[];
}

class WatchGroup {
  readonly streams = new Set<WatchSink>();
  subscription: Subscription | undefined;
  /** the keys of the selection (a query's), or undefined: not kept */
  members: Set<string> | undefined;
  /** changes up to this stamp send remove for whatever they do not show (members not known then) */
  exactAfter = Number.POSITIVE_INFINITY;
  /** the read of `members`, awaited by the first batch */
  ready: Promise<void> = Promise.resolve();
  /** the filter as a selection, per grants (a session's privileges may change) */
  #query: { grants: unknown; selection: EntitySelection | null | 'unreadable' } | undefined;
  closed = false;
  /** the stamp it has sent everything up to (set as it sends, before the feed moves its subscription's) */
  toldUpto = Number.POSITIVE_INFINITY;
  /** the grants `members` were kept under: a change of the session's privileges lets them go */
  #membersGrants: unknown;
  /** what its entity events' texts are kept under: the groups of one shape share them */
  readonly shapeKey: string;

  constructor(readonly hub: WatchHub, readonly key: string, readonly viewer: string, readonly scope: Scope, readonly action: WatchAction, readonly only: string | undefined, readonly resumed: boolean) {
    this.shapeKey = `${action.target.kind === 'entity' ? 'e' : 'c'}${JSON.stringify(action.shape)}`;
  }

  get dc(): DataClassCore {
    return this.action.dc;
  }

  /** The stamp it has told everything up to. */
  get stamp(): number {
    return Math.min(this.toldUpto, this.subscription?.stamp ?? Number.POSITIVE_INFINITY);
  }

  /** Its filter as `scope` may run it now: a selection (null for none), or 'unreadable' (an attribute of it hidden now). */
  query(scope: Scope): EntitySelection | null | 'unreadable' {
    if (this.#query?.grants === scope.access.grants) return this.#query.selection;
    let selection: EntitySelection | null | 'unreadable';
    const { target } = this.action;
    if (target.kind === 'entity' || !target.narrowing.filter) selection = null;
    else {
      try {
        selection = queryWith(this.dc.selectWhere(null, scope.access), target.narrowing.filter, target.narrowing.params, scope.visible);
      } catch (e) {
        if (!(e instanceof DatasetError) || (e.status !== 401 && e.status !== 403)) throw e;
        selection = 'unreadable';
      }
    }
    this.#query = { grants: scope.access.grants, selection };
    return selection;
  }

  /**
   * Reads the keys of its selection (a query's group), and the stamp they are sure after — for a
   * filter on the entity's own values only, in a model without restrict(): an entity then enters
   * or leaves the selection only by a change of its own, which the group sees. (A filter through a
   * relation, or a row filter of the session, lets entities enter unseen: the group could not tell
   * which ones a client holds, and sends remove for every change it does not show.)
   */
  async readMembers(): Promise<void> {
    if (this.action.target.kind !== 'query' || rowsRestricted(this.scope.core)) return;
    const q = this.query(this.scope);
    if (q === 'unreadable' || (q !== null && !judgedByOwnValues(q))) return;
    // (the room is taken before the read, and what it did not use given back: groups reading at once share it)
    const room = Math.min(MAX_GROUP_MEMBERS, MAX_MEMBERS_IN_ALL - this.hub.membersKept);
    if (room <= 0) return;
    this.hub.membersKept += room;
    let kept = 0;
    try {
      const keys = await (q ?? this.dc.selectWhere(null, this.scope.access)).slice(0, room + 1).keys();
      // (read after the keys: a change with a later stamp began after they were read)
      const after = await this.scope.ds.getGlobalStamp();
      if (keys.length > room || this.closed) return;
      this.members = new Set(Array.from(keys as ArrayLike<unknown>, String));
      this.#membersGrants = this.scope.access.grants;
      kept = this.members.size;
      this.exactAfter = after;
    } finally {
      this.hub.membersKept -= room - kept;
    }
  }

  /** Lets go of the keys it kept: from now on it sends remove for every change it does not show. */
  #dropMembers(): void {
    if (!this.members) return;
    this.hub.membersKept -= this.members.size;
    this.members = undefined;
    this.exactAfter = Number.POSITIVE_INFINITY;
  }

  endAll(last?: string): void {
    for (const s of [...this.streams]) s.end(last);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.subscription?.close();
    this.#dropMembers();
    this.hub.forget(this);
  }

  /** One batch of the feed, told to its streams as one text. */
  async tell(batch: ChangeBatch): Promise<void> {
    await this.ready;
    if (this.closed) return;
    let changes: readonly Change[] = this.only === undefined ? batch.changes : batch.changes.filter((c) => String(c.key) === this.only);
    if (changes.length === 0) return void (this.toldUpto = batch.upto);
    const judged = await this.hub.judge(batch, this);
    if (judged === 'session ended') return this.endAll(RESETS.sessionEnded);
    // (its own filter could not be matched — too big for the engine, too slow —: its streams read again)
    if (judged.failed.has(this)) return this.endAll(RESETS.failed);
    // (the session's privileges changed: what it kept is no guide to what its client holds)
    if (this.members && judged.scope.access.grants !== this.#membersGrants) this.#dropMembers();
    if (this.action.target.kind === 'set') {
      const kept = await setMembersAmong(judged.scope, this.action.target.id, this.dc, changes);
      if (!kept) return this.endAll(RESETS.setGone);
      changes = kept;
    }
    const text = await this.#events(judged, changes);
    if (text) for (const s of this.streams) s.send(text);
    this.toldUpto = batch.upto;
  }

  async #events(judged: Judged, changes: readonly Change[]): Promise<string> {
    const at = judged.index.get(this) ?? -1;
    const entityTarget = this.action.target.kind === 'entity';
    let bodies = judged.bodies.get(this.shapeKey);
    if (!bodies) judged.bodies.set(this.shapeKey, (bodies = new Map()));
    const texts = changes === judged.changes ? judged.texts : changes.map((c) => String(c.key));
    const out: string[] = [];
    let pending: string | undefined;
    let pendingStamp = 0;
    const flush = (id?: number) => {
      if (pending !== undefined) out.push(id === undefined ? pending : pending.replace(/\ndata: /, `\nid: ${id}\ndata: `));
      pending = undefined;
    };
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i];
      // (the last event of a stamp carries its id: a client resuming never splits one write's changes)
      if (pending !== undefined && c.stamp !== pendingStamp) flush(pendingStamp);
      const key = texts[i];
      const seen = c.dropped ? undefined : judged.found.get(key);
      const shown = seen !== undefined && seen.within[at] === 1;
      const event = shown ? await this.#entity(judged, bodies, key, seen.entity, entityTarget) : this.#remove(key, c.stamp, c.dropped);
      if (event === undefined) continue;
      if (pending !== undefined) out.push(pending);
      pending = event;
      pendingStamp = c.stamp;
    }
    flush(pendingStamp);
    return out.join('');
  }

  async #entity(judged: Judged, bodies: Map<string, Promise<string>>, key: string, entity: EntityWithin['entity'], entityTarget: boolean): Promise<string> {
    let text = bodies.get(key);
    if (!text) {
      text = entityBody(judged.scope, entity, this.action.shape).then((body) => {
        const data = body as Record<string, unknown>;
        if (!entityTarget) delete data.__entityModel;
        return `event: entity\ndata: ${JSON.stringify(data)}\n\n`;
      });
      bodies.set(key, text);
    }
    if (this.members && !this.members.has(key)) {
      // (past its bounds it keeps none: a remove for every change it does not show, from now on)
      if (this.members.size >= MAX_GROUP_MEMBERS || this.hub.membersKept >= MAX_MEMBERS_IN_ALL) this.#dropMembers();
      else {
        this.members.add(key);
        this.hub.membersKept++;
      }
    }
    return text;
  }

  /** A remove, or nothing when the group knows the entity was not in its selection (a drop is always told: it is cheap, and final). */
  #remove(key: string, stamp: number, dropped: boolean): string | undefined {
    const was = this.members?.delete(key) ?? true;
    if (this.members && was) this.hub.membersKept--;
    if (!was && !dropped && stamp > this.exactAfter) return undefined;
    return removeEvent(key);
  }
}

/** The watch groups of one server (its services'). */
export class WatchHub {
  readonly #groups = new Map<string, WatchGroup[]>();
  /** the groups of each dataclass and viewer: judged together */
  readonly #byViewer = new Map<string, Set<WatchGroup>>();
  readonly #judged = new WeakMap<ChangeBatch, Map<string, Promise<Judged | 'session ended'>>>();
  #heartbeat: NodeJS.Timeout | undefined;
  membersKept = 0;

  /**
   * Adds a stream to the group of what it watches — one that has told nothing past `from` (the
   * stream's first stamp), or, for a stream resuming from a Last-Event-ID, a group of its own
   * from there (it is told what it missed, none twice) — and resolves once it is subscribed, with
   * the stamp the stream is told every change after (its group's, at most `from`).
   * The stream leaves with leave().
   */
  async join(scope: Scope, action: WatchAction, only: string | undefined, from: number, resumed: boolean, sink: WatchSink): Promise<{ group: WatchGroup; startsAt: number }> {
    const viewer = viewerOf(scope);
    const key = [viewer, action.dc.name, JSON.stringify(action.target), only ?? '', JSON.stringify(action.shape)].join('\u0000');
    const candidates = this.#groups.get(key) ?? [];
    const found = resumed ? undefined : candidates.find((g) => !g.closed && !g.resumed && g.subscription && g.stamp <= from);
    if (found) {
      found.streams.add(sink);
      return { group: found, startsAt: Math.min(found.stamp, from) };
    }
    const group = new WatchGroup(this, key, viewer, scope, action, only, resumed);
    group.streams.add(sink);
    candidates.push(group);
    this.#groups.set(key, candidates);
    const byViewer = `${viewer}\u0000${action.dc.name}`;
    let peers = this.#byViewer.get(byViewer);
    if (!peers) this.#byViewer.set(byViewer, (peers = new Set()));
    peers.add(group);
    this.#startHeartbeat();
    try {
      group.ready = group.readMembers().catch(() => undefined);
      group.subscription = await scope.core.changes.subscribe(action.dc.model, (batch) => group.tell(batch).catch(() => group.endAll(RESETS.failed)), from);
      if (group.closed || group.streams.size === 0) group.close();
    } catch (e) {
      group.close();
      throw e;
    }
    return { group, startsAt: from };
  }

  /** A stream leaves its group; the last one closes it. */
  leave(group: WatchGroup, sink: WatchSink): void {
    group.streams.delete(sink);
    if (group.streams.size === 0 && group.subscription) group.close();
  }

  forget(group: WatchGroup): void {
    const list = this.#groups.get(group.key)?.filter((g) => g !== group) ?? [];
    if (list.length > 0) this.#groups.set(group.key, list);
    else this.#groups.delete(group.key);
    const byViewer = `${group.viewer}\u0000${group.dc.name}`;
    const peers = this.#byViewer.get(byViewer);
    peers?.delete(group);
    if (peers?.size === 0) this.#byViewer.delete(byViewer);
    if (this.#groups.size === 0) this.#stopHeartbeat();
  }

  /** Ends every stream (a closing server). */
  endAll(): void {
    for (const list of [...this.#groups.values()]) for (const g of list) g.endAll();
  }

  /**
   * A batch as `group`'s viewer sees it now — its session read again (ended: no more events), its
   * privileges and row filters as they stand — judged once for every group of that viewer on the
   * dataclass (the groups the feed tells the same batch share it).
   */
  judge(batch: ChangeBatch, group: WatchGroup): Promise<Judged | 'session ended'> {
    let byViewer = this.#judged.get(batch);
    if (!byViewer) this.#judged.set(batch, (byViewer = new Map()));
    let judged = byViewer.get(group.viewer);
    // (a group that joined after the batch was judged for the others is judged on its own)
    const fresh = judged === undefined;
    judged ??= this.#judgeFor(batch, group, [...(this.#byViewer.get(`${group.viewer}\u0000${group.dc.name}`) ?? [group])]);
    if (fresh) byViewer.set(group.viewer, judged);
    return judged.then((j) => (j === 'session ended' || j.index.has(group) ? j : this.#judgeFor(batch, group, [group])));
  }

  async #judgeFor(batch: ChangeBatch, first: WatchGroup, groups: WatchGroup[]): Promise<Judged | 'session ended'> {
    const session = await liveSession(first.scope);
    if (!session) return 'session ended';
    // the session as it is now: its privileges, its row filters (and a budget of its own)
    const scope = scopeFor(first.scope.services, first.scope.request, session);
    const index = new Map<WatchGroup, number>();
    const queries: (EntitySelection | null)[] = [];
    for (const g of groups) {
      const q = g.query(scope);
      if (q === 'unreadable') continue;
      index.set(g, queries.length);
      queries.push(q);
    }
    // (when every group follows one entity, the others' changes are not read)
    const only = groups.every((g) => g.only !== undefined) ? new Set(groups.map((g) => g.only)) : undefined;
    const keys = batch.changes.filter((c) => !c.dropped && (!only || only.has(String(c.key)))).map((c) => c.key);
    let found = new Map<string, EntityWithin>();
    const failed = new Set<WatchGroup>();
    if (keys.length > 0 && queries.length > 0) {
      try {
        const within = await entitiesWithin(first.dc, keys, queries, scope.access);
        found = within.found;
        for (const [g, at] of index) if (within.failed.has(at)) failed.add(g);
      } catch (e) {
        // the session may no longer read the dataclass: it sees none of it (any other failure —
        // the database busy, gone — is no reason to remove anything: the streams reset)
        if (!(e instanceof DatasetError) || (e.status !== 401 && e.status !== 403)) throw e;
      }
    }
    // (a group not judged — its filter unreadable now — sees nothing: the -1 matches no entity)
    for (const g of groups) if (!index.has(g)) index.set(g, -1);
    return { scope, found, failed, index, bodies: new Map(), changes: batch.changes, texts: batch.changes.map((c) => String(c.key)) };
  }

  #startHeartbeat(): void {
    if (this.#heartbeat) return;
    // one timer for every stream: a comment keeps proxies from closing them, and a session that
    // ended with nothing to tell is found (once a group), a watched set kept in use
    this.#heartbeat = setInterval(() => {
      for (const list of this.#groups.values()) {
        for (const g of list) {
          for (const s of [...g.streams]) s.send(': heartbeat\n\n');
          void liveSession(g.scope).then((s) => s ?? g.endAll(RESETS.sessionEnded), () => undefined);
          if (g.action.target.kind === 'set') void setsOf(g.scope).find(g.action.target.id).then(undefined, () => undefined);
        }
      }
    }, HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}

export type { WatchGroup };

/** A remove event's text (the last few hundred made are kept: every group of a batch tells the same ones). */
const removes = new Map<string, string>();
function removeEvent(key: string): string {
  let text = removes.get(key);
  if (text === undefined) {
    if (removes.size >= 1000) removes.clear();
    removes.set(key, (text = `event: remove\ndata: ${JSON.stringify({ [WIRE.KEY]: key })}\n\n`));
  }
  return text;
}

/**
 * Who a stream's events are judged for: one stored session (its privileges may change, it may
 * end); a session not stored, by its user and privileges — all its grants depend on — when no
 * dataclass has a restrict(), else by itself (restrict() sees the session: its id, its storage).
 */
function viewerOf(scope: Scope): string {
  const { session } = scope;
  if (sessionInternals.stored(session) || rowsRestricted(scope.core)) return `session:${sessionInternals.id(session)}`;
  return `guest:${session.userName}:${session.getPrivileges().sort().join(',')}`;
}
