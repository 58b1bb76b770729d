// The entity sets as one session sees them, through one access: the security rule of sets, in the
// core, so that whoever serves them (REST today) only says who asks. A session reads, combines and
// releases only the sets it made (another's is as if it did not exist: 1802); an administrator
// (ADMIN_PRIVILEGE), or anyone in a project without roles (where every request may read everything
// anyway), reads every set. A session makes sets within its quota, and is kept (stored, even a
// guest) so that its sets are counted. Under a row filter (restrict()) a session sees, of any set,
// only the members it may see.

import { ADMIN_PRIVILEGE, DEFAULT_SET_TIMEOUT_S } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Access } from '../access/access.js';
import type { DataClassCore } from '../dataclass-core.js';
import type { Core } from '../datastore.js';
import { type Session, sessionInternals } from '../sessions/session.js';
import type { EntitySelection } from '../selections/selection.js';
import type { KeyList, SetInfo, SetReader, SetSlice, StoredSet } from './entity-set-store.js';
import { combine, intersects, type SetOperator, type SetOwner, setNotFound } from './entity-sets.js';

/** A stored set as a caller defines it: the set (made again by `saved` if it is gone), combined with another, cleaned. */
export interface SetQuery {
  readonly id: string;
  readonly logic?: { readonly operator: SetOperator | 'INTERSECT'; readonly other: string };
  /** only the members still in the datastore */
  readonly clean: boolean;
  /** the selection the set was made of ($savedfilter / $savedorderby), through the access given: to make it again under its id when it expired or was released */
  readonly saved?: (access: Access) => EntitySelection;
}

/**
 * A stored set as its query defines it: its keys (combined, cleaned), or whether it shares an
 * entity with another (INTERSECT). `rebuilt`: the set had gone and was made again from its saved
 * selection, under its id.
 */
export type ResolvedSet = { readonly set: StoredSet; readonly keys: KeyList; readonly sorted: boolean; readonly rebuilt: boolean } | { readonly intersects: boolean };

type SetsCore = Pick<Core, 'sets' | 'policy' | 'sessions'>;

/** The sets `session` may use, read through `access`; `limit`: the sets it may hold at once (--max-sets-per-session). */
export function sessionSets(core: SetsCore, session: Session, access: Access, limit: number): SessionSets {
  return new SessionSets(core, session, access, limit);
}

export class SessionSets {
  /** who reads: the session's id, or undefined for one that reads every set */
  readonly #reader: SetReader;

  constructor(private readonly core: SetsCore, private readonly session: Session, readonly access: Access, private readonly limit: number) {
    this.#reader = core.policy.isOpen || session.hasPrivilege(ADMIN_PRIVILEGE) ? undefined : sessionInternals.id(session);
  }

  /** The session as the maker of a set: within its quota, and stored (even a guest's) so that its sets are counted. */
  #owner(): SetOwner {
    const session = this.session;
    sessionInternals.keep(session);
    const stored = sessionInternals.stored(session);
    return { id: sessionInternals.id(session), limit: this.limit, makeRoom: stored ? undefined : () => this.core.sessions.makeRoom(session.isGuest()) };
  }

  /** The set, its lifetime started again; undefined when it is gone (or not the session's). */
  find(id: string): Promise<StoredSet | undefined> {
    return this.core.sets.find(id, this.#reader);
  }

  /** The set (of `dataClass`, when given), or 1802. */
  get(id: string, dataClass?: string): Promise<StoredSet> {
    return this.core.sets.get(id, dataClass, this.#reader);
  }

  /** Members [from, to) of the set, its lifetime started again; undefined when it is gone (or not the session's). */
  slice(id: string, from: number, to: number): Promise<SetSlice | undefined> {
    return this.core.sets.findSlice(id, from, to, this.#reader);
  }

  /** Stores every member of a selection as a new set of the session's. */
  create(selection: EntitySelection, timeoutS = DEFAULT_SET_TIMEOUT_S): Promise<StoredSet> {
    return this.core.sets.create(selection, timeoutS, this.#owner());
  }

  /** Stores a key list as a new set of the session's. */
  store(dataClass: string, keys: KeyList, sorted: boolean, timeoutS = DEFAULT_SET_TIMEOUT_S): Promise<StoredSet> {
    return this.core.sets.store(dataClass, keys, sorted, timeoutS, this.#owner());
  }

  /** A set that had gone, made again under its id from `selection`: the session's now (entity-sets.ts rebuild). */
  rebuild(id: string, selection: EntitySelection): Promise<StoredSet> {
    return this.core.sets.rebuild(id, selection, this.#owner());
  }

  /** true when the set existed and the session may release it. */
  release(id: string): Promise<boolean> {
    return this.core.sets.release(id, this.#reader);
  }

  /** The sets the session sees (every live one, for an administrator). */
  list(): Promise<SetInfo[]> {
    return this.core.sets.list(this.#reader);
  }

  /** The entities whose keys are listed, as a selection (through the session's access) in key order. */
  members(dc: DataClassCore, keys: KeyList): EntitySelection {
    return this.core.sets.members(dc, keys, this.access);
  }

  /** The members of the set `id` (of `dataClass`, when given), or 1802. */
  async membersOf(dc: DataClassCore, id: string): Promise<EntitySelection> {
    return this.members(dc, (await this.get(id, dc.name)).keys);
  }

  /** The keys of a selection made from a set's members (filtered, sorted): in its own order when it has one, else in the set's. */
  narrowed(keys: KeyList, selection: EntitySelection): Promise<{ keys: KeyList; ordered: boolean }> {
    return this.core.sets.narrowed(keys, selection);
  }

  /** Drops every member of the set `id` of `dc` still in the datastore (events run), in one transaction; 1802 when the session has no such set. */
  async drop(dc: DataClassCore, id: string): Promise<void> {
    await this.core.sets.drop(dc, await this.get(id, dc.name), this.access);
  }

  /**
   * A stored set of `dc` as `query` defines it: found (or made again from its saved selection),
   * combined with another of the session's ($logicOperator), cleaned of dropped members. Under a
   * row filter only the members the session may see are in it.
   */
  async resolve(dc: DataClassCore, query: SetQuery): Promise<ResolvedSet> {
    const sets = this.core.sets;
    const found = await this.find(query.id);
    const set = found ?? (await this.#rebuild(dc, query));
    if (set.dataClass !== dc.name) throw setNotFound(query.id);
    // a session whose rows of dc are filtered (restrict()) sees, of any set, only the members it may see
    const filtered = this.access.restrict?.(dc.model) != null;
    const seen = async (k: KeyList) => (filtered ? sets.clean(dc, k, this.access) : k);
    let keys = await seen(set.keys);
    if (query.logic) {
      const other = await this.get(query.logic.other);
      if (other.dataClass !== set.dataClass) {
        throw new DatasetError('INVALID_OPTION', `$logicOperator combines sets of one dataclass: ${set.id} holds ${set.dataClass}, ${other.id} holds ${other.dataClass}`);
      }
      if (query.logic.operator === 'INTERSECT') return { intersects: intersects(keys, await seen(other.keys)) };
      keys = combine(keys, await seen(other.keys), query.logic.operator);
    }
    // the members still in the datastore, in the set's order (under a row filter, cleaned already)
    if (query.clean && !filtered) keys = await sets.clean(dc, keys, this.access);
    return { set, keys, sorted: set.sorted, rebuilt: found === undefined };
  }

  /** An expired or released set asked for with its saved selection comes back under its id; otherwise 1802. */
  #rebuild(dc: DataClassCore, query: SetQuery): Promise<StoredSet> {
    if (!query.saved) throw setNotFound(query.id);
    return this.rebuild(query.id, query.saved(this.access));
  }
}
