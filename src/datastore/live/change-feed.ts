// The changes of the dataclasses that track them (writes/tracking.ts), as a feed: what the live
// streams of issue 36 (and later webhooks) follow. A change is an entity's key, its dataclass,
// the stamp of the write, and whether it was dropped — read back from the data itself
// (`__GlobalStamp > :since`, `__DeletedRecords.__Stamp > :since`), never kept in memory, so that
// it is the same on every instance and a subscriber can start from any stamp (a stream's
// Last-Event-ID) as long as __DeletedRecords still holds its drops. The feed reads what is new
// when this process commits a tracked write (committed(), called after the commit), when another
// instance's commit says so through the engine's messages (PostgreSQL's NOTIFY, heard with LISTEN
// on a connection of its own), and at a poll (every `pollMs` while anyone subscribes) whenever a
// subscriber is behind the global stamp — what a lost message or another program left. It reads
// up to the settled global stamp (every change up to it is readable: ds.getGlobalStamp()), so
// that no change is skipped and none comes twice. Each
// subscriber is told the changes of its dataclass in stamp order; what it may see of them (its
// session, its filter) is its own business.

import { LIVE_GATHER_MS } from '../../config/limits.js';
import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import { INTEGER_TYPES, TRACKING } from '../../model/types.js';
import { and, directPath, type Condition } from '../../query/plan.js';
import { compileSelect } from '../../sql/compiler/statements.js';
import { readGlobalStamp, readSettledGlobalStamp } from '../../storage/system-tables/global-stamp.js';
import type { CoreView } from '../core-types.js';

/** One change of a tracked entity. */
export interface Change {
  readonly key: unknown;
  /** the global stamp of the write (what a stream sends as its event id) */
  readonly stamp: number;
  /** dropped (a __DeletedRecords entity), else created or updated */
  readonly dropped: boolean;
}

/** The changes of one dataclass with a stamp after `since` and up to `upto`, in stamp order. */
export interface ChangeBatch {
  readonly dataClass: DataClassModel;
  readonly since: number;
  readonly upto: number;
  readonly changes: readonly Change[];
}

export type ChangeListener = (batch: ChangeBatch) => void | Promise<void>;

export interface Subscription {
  /** the stamp the subscriber has been told everything up to */
  readonly stamp: number;
  close(): void;
}

/** The channel of the engine's messages (PostgreSQL's NOTIFY) that tell the instances of a database which dataclasses were written. */
const CHANGES_CHANNEL = 'dataset_rest_changes';

/** How long after a LISTEN was begun (and lost, or refused) another is begun. */
const LISTEN_RETRY_MS = 5000;

/** A wake that adds no dataclass: a read again of what woke the feed during the last one. */
const NOTHING_MORE: ReadonlySet<string> = new Set();

/** The changes of one read, at most (a subscriber far behind is told them over several batches). */
const MAX_CHANGES_PER_READ = 1000;

interface Subscriber {
  readonly dc: DataClassModel;
  readonly listener: ChangeListener;
  stamp: number;
  closed: boolean;
}

export class ChangeFeed {
  readonly #core: CoreView;
  readonly #pollMs: number;
  readonly #subscribers = new Set<Subscriber>();
  #timer: NodeJS.Timeout | undefined;
  /** a read under way, and whether another was asked meanwhile (they coalesce) */
  #reading: Promise<void> | undefined;
  #again = false;
  /**
   * The dataclasses whose commits woke the feed since its last read began: a wake after a commit
   * reads theirs only — the streams of the others cost a write nothing. 'all' when a poll finds
   * subscribers behind the global stamp (another instance's writes: any dataclass), or for a
   * subscriber from an earlier stamp.
   */
  #dirty: Set<string> | 'all' = new Set();
  /** closed with its datastore: a read gathering commits reads nothing */
  #closed = false;
  /** the engine's messages heard (PostgreSQL's LISTEN), while anyone subscribes: how to stop */
  #listening: Promise<(() => Promise<void>) | undefined> | undefined;
  /** when a LISTEN was last begun (one lost is begun again LISTEN_RETRY_MS later at the soonest) */
  #listenTried = 0;
  /** the dataclasses of this turn's commits, for the one message they share */
  readonly #toNotify = new Set<string>();

  constructor(core: CoreView, options: { readonly pollMs?: number } = {}) {
    this.#core = core;
    this.#pollMs = options.pollMs ?? 250;
  }

  /**
   * Tells `listener` every change of `dc` after `since` (now, when absent), in stamp order, as
   * batches; resolves once it is subscribed (from now on nothing is skipped). Refused for a
   * dataclass that does not track its changes (there is nothing to follow).
   */
  async subscribe(dc: DataClassModel, listener: ChangeListener, since?: number): Promise<Subscription> {
    if (!dc.globalStamp) throw new Error(`${dc.name} does not track its changes`);
    if (this.#closed) throw new Error('the change feed is closed (its datastore closed)');
    const start = since ?? (await readSettledGlobalStamp(this.#core.storage));
    // (closed while the stamp was read: nothing may start, a LISTEN connection least of all)
    if (this.#closed) throw new Error('the change feed is closed (its datastore closed)');
    const sub: Subscriber = { dc, listener, stamp: start, closed: false };
    this.#subscribers.add(sub);
    this.#startPolling();
    // (a subscriber from an earlier stamp is told what it missed at once)
    if (since !== undefined) this.wake('all');
    return {
      get stamp() { return sub.stamp; },
      close: () => {
        sub.closed = true;
        this.#subscribers.delete(sub);
        if (this.#subscribers.size === 0) this.#stopPolling();
      },
    };
  }

  /**
   * This process committed tracked writes of these dataclasses: its subscribers are told soon,
   * and so are the other instances' on the same database, where the engine carries messages.
   */
  committed(touched: ReadonlySet<string>): void {
    this.wake(touched);
    const notify = this.#core.storage.notify;
    if (!notify) return;
    // the commits of one turn of the event loop (a transaction's saves, a burst) share one message
    const first = this.#toNotify.size === 0;
    for (const name of touched) this.#toNotify.add(name);
    if (!first) return;
    setImmediate(() => {
      const names = [...this.#toNotify].join('\n');
      this.#toNotify.clear();
      // (a message lost: the other instances' poll reads it)
      void notify(CHANGES_CHANNEL, names).catch(() => undefined);
    });
  }

  /**
   * Something may have changed — this process committed a tracked write of these dataclasses,
   * or, 'all', any dataclass may have: the subscribers are told soon.
   */
  wake(what: 'all' | ReadonlySet<string> = 'all'): void {
    if (this.#subscribers.size === 0) return;
    if (what === 'all') this.#dirty = 'all';
    else if (this.#dirty !== 'all') for (const name of what) this.#dirty.add(name);
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = (async () => {
      // the commits of the next few ms are read with this one: under a steady stream of writes,
      // a read (and each stream's judgement and text) covers several, for a few ms of latency
      await new Promise((resolve) => setTimeout(resolve, LIVE_GATHER_MS));
      this.#again = false;
      if (this.#closed) return;
      await this.#readAll();
    })().catch(() => {
      // (the database unreachable for a moment, or closed: the next wake or poll reads again)
    }).finally(() => {
      this.#reading = undefined;
      if (this.#again) {
        this.#again = false;
        this.wake(NOTHING_MORE);
      }
    });
  }

  /** Whether it hears the engine's messages (its LISTEN is in place), once it knows (tests). */
  async hearsMessages(): Promise<boolean> {
    return (await this.#listening) !== undefined;
  }

  /** Waits for the reads under way (tests, and a clean close). */
  async settle(): Promise<void> {
    while (this.#reading) await this.#reading;
  }

  close(): void {
    this.#closed = true;
    for (const sub of this.#subscribers) sub.closed = true;
    this.#subscribers.clear();
    this.#stopPolling();
  }

  #startPolling(): void {
    if (this.#timer || this.#closed) return;
    this.#listen();
    this.#timer = setInterval(() => void this.#poll(), this.#pollMs);
    this.#timer.unref();
  }

  /**
   * Hears the other instances' commits as messages at once, where the engine has them. A
   * connection lost (the server restarted) is made again at a poll, LISTEN_RETRY_MS after the
   * last try; meanwhile the poll reads what the messages would have told.
   */
  #listen(): void {
    const listen = this.#core.storage.listen;
    if (!listen || this.#listening || this.#closed || Date.now() - this.#listenTried < LISTEN_RETRY_MS) return;
    this.#listenTried = Date.now();
    const mine = listen(CHANGES_CHANNEL, (payload) => this.wake(new Set(payload.split('\n'))), () => {
      if (this.#listening === mine) this.#listening = undefined;
    }).catch(() => {
      if (this.#listening === mine) this.#listening = undefined;
      return undefined;
    });
    this.#listening = mine;
  }

  #stopPolling(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const listening = this.#listening;
    this.#listening = undefined;
    void listening?.then((stop) => stop?.());
  }

  async #poll(): Promise<void> {
    try {
      this.#listen();
      const now = await readGlobalStamp(this.#core.storage);
      // (a subscriber behind the stamp: another instance wrote, or a read stopped short of a
      // write still under way then — it is read now)
      for (const sub of this.#subscribers) {
        if (sub.stamp < now) return this.wake('all');
      }
    } catch {
      // (the database unreachable for a moment: the next poll tries again)
    }
  }

  /**
   * Reads, for each subscriber, the changes of its dataclass since its stamp, up to the settled
   * stamp, and tells it. Subscribers of one dataclass at one stamp (most of them: they follow the
   * same feed) share one read, and are told together; each subscriber's batches stay in order.
   */
  async #readAll(): Promise<void> {
    const dirty = this.#dirty;
    this.#dirty = new Set();
    const upto = await readSettledGlobalStamp(this.#core.storage);
    for (;;) {
      const groups = new Map<string, Subscriber[]>();
      for (const sub of this.#subscribers) {
        if (sub.closed || sub.stamp >= upto || (dirty !== 'all' && !dirty.has(sub.dc.name))) continue;
        const key = `${sub.dc.name}\u0000${sub.stamp}`;
        const group = groups.get(key);
        if (group) group.push(sub);
        else groups.set(key, [sub]);
      }
      if (groups.size === 0) return;
      for (const group of groups.values()) {
        const { dc, stamp: since } = group[0];
        const { changes, reached } = await this.#changes(dc, since, upto);
        // (nothing changed: the subscribers are told nothing, and are past it)
        if (changes.length === 0) {
          for (const sub of group) sub.stamp = reached;
          continue;
        }
        const batch: ChangeBatch = { dataClass: dc, since, upto: reached, changes };
        await Promise.all(group.map((sub) => this.#tell(sub, batch)));
      }
    }
  }

  async #tell(sub: Subscriber, batch: ChangeBatch): Promise<void> {
    if (sub.closed) return;
    try {
      await sub.listener(batch);
      sub.stamp = batch.upto;
    } catch {
      // a subscriber that cannot take a batch is let go (never told the next ones as if it had
      // this one); the others are told still
      sub.closed = true;
      this.#subscribers.delete(sub);
    }
  }

  /**
   * The changes of `dc` in (since, upto], MAX_CHANGES_PER_READ at most: its entities' stamps and
   * its drops, merged in stamp order; `reached` is the stamp they cover up to (upto, or the last
   * stamp read when there were more, taken whole: the changes of one stamp never split).
   */
  async #changes(dc: DataClassModel, since: number, upto: number): Promise<{ changes: Change[]; reached: number }> {
    const storage = this.#core.storage;
    const d = storage.dialect;
    const stampAttr = dc.globalStamp as StorageAttribute;
    const inRange = (attr: StorageAttribute, also?: Condition): Condition => and(and({ kind: 'compare', path: directPath(attr), op: '>', value: since }, { kind: 'compare', path: directPath(attr), op: '<=', value: upto }), also ?? null) as Condition;
    const read = async (model: DataClassModel, key: StorageAttribute, stamp: StorageAttribute, where: Condition) => {
      const { sql, params } = compileSelect(d, { dataClass: model, columns: [{ kind: 'storage', attr: key }, { kind: 'storage', attr: stamp }], where, order: [{ path: directPath(stamp), descending: false }], offset: 0, limit: MAX_CHANGES_PER_READ + 1 }, null);
      return (await storage.arrays(sql, params)).map((r) => ({ key: d.types.decode(key.type, r[0], false), stamp: Number(r[1]) }));
    };
    const saved = await read(dc, dc.key, stampAttr, inRange(stampAttr));
    const deleted = this.#core.model.deletedRecords as DataClassModel;
    const attr = (name: string) => deleted.attributesByName.get(name) as StorageAttribute;
    const dropped = await read(deleted, attr(TRACKING.PRIMARY_KEY), attr(TRACKING.STAMP), inRange(attr(TRACKING.STAMP), { kind: 'compare', path: directPath(attr(TRACKING.TABLE_NAME)), op: '=', value: dc.name }));
    const all: Change[] = [...saved.map((c) => ({ ...c, dropped: false })), ...dropped.map((c) => ({ key: keyOf(dc, c.key), stamp: c.stamp, dropped: true }))];
    all.sort((a, b) => a.stamp - b.stamp);
    // more than one read holds: keep whole stamps up to the last one both lists reached
    const full = saved.length > MAX_CHANGES_PER_READ || dropped.length > MAX_CHANGES_PER_READ;
    if (!full) return { changes: all, reached: upto };
    const ends = [saved, dropped].filter((l) => l.length > MAX_CHANGES_PER_READ).map((l) => l[MAX_CHANGES_PER_READ].stamp);
    const cut = Math.min(...ends) - 1;
    // (a single stamp with more changes than a read holds is told whole, however many)
    if (cut <= since) return this.#changesOfOneStamp(dc, since + 1);
    return { changes: all.filter((c) => c.stamp <= cut), reached: cut };
  }

  /** Every change of one stamp (a batch of more entities than a read holds), read without a limit. */
  async #changesOfOneStamp(dc: DataClassModel, stamp: number): Promise<{ changes: Change[]; reached: number }> {
    // (rare: an $atomic batch or an import statement batch past a thousand entities)
    const storage = this.#core.storage;
    const d = storage.dialect;
    const exactly = (attr: StorageAttribute, also?: Condition): Condition => and({ kind: 'compare', path: directPath(attr), op: '=', value: stamp }, also ?? null) as Condition;
    const keys = async (model: DataClassModel, key: StorageAttribute, where: Condition) => {
      const { sql, params } = compileSelect(d, { dataClass: model, columns: [{ kind: 'storage', attr: key }], where, order: [], offset: 0 }, null);
      return (await storage.arrays(sql, params)).map((r) => d.types.decode(key.type, r[0], false));
    };
    const deleted = this.#core.model.deletedRecords as DataClassModel;
    const attr = (name: string) => deleted.attributesByName.get(name) as StorageAttribute;
    const saved = await keys(dc, dc.key, exactly(dc.globalStamp as StorageAttribute));
    const dropped = await keys(deleted, attr(TRACKING.PRIMARY_KEY), exactly(attr(TRACKING.STAMP), { kind: 'compare', path: directPath(attr(TRACKING.TABLE_NAME)), op: '=', value: dc.name }));
    return { changes: [...saved.map((key) => ({ key, stamp, dropped: false })), ...dropped.map((key) => ({ key: keyOf(dc, key), stamp, dropped: true }))], reached: stamp };
  }
}

/** A dropped entity's key as its dataclass types it (__DeletedRecords keeps it as text). */
function keyOf(dc: DataClassModel, text: unknown): unknown {
  return INTEGER_TYPES.has(dc.key.type) || dc.key.type === 'number' ? Number(text) : text;
}
