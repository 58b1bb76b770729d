// $method=watch (issue 36): the changes of a query's entities, of one entity, or of an entity
// set's members (with an optional $filter), as Server-Sent Events. The core's change feed
// (datastore/live/change-feed.ts) tells which entities of the dataclass changed; each batch is
// judged as the watcher's session sees it at that moment (../change-events.ts), so that:
//   event: entity, data: the entity as a read of the URL with the same $attributes shows it,
//     when it is (still, or newly) in what the watcher sees;
//   event: remove, data: {"__KEY": …}, when it is not (dropped, left the filter, or hidden from
//     the session now) — sent for a key the client may never have had: it ignores those;
//   each with `id: <stamp>` on the last event of a stamp, so that a client resuming with
//   Last-Event-ID never splits the changes of one write.
// The stream starts with `event: ready` (id and data: the stamp it starts from), then what the
// client missed since its Last-Event-ID, then the changes as they come; a comment every
// HEARTBEAT_MS keeps proxies from closing it. A client too slow to take its events (more than
// MAX_WATCH_BUFFER_BYTES waiting) gets `event: reset` and the end of its stream: it reads again.
// So does one whose Last-Event-ID is older than __DeletedRecords keeps (model.json's retention),
// and one whose session ends (logout, expiry, a login's new session: found at its next batch or
// heartbeat).

import { PassThrough } from 'node:stream';
import { MAX_WATCHED_SET_MEMBERS, MAX_WATCH_BUFFER_BYTES, MAX_WATCH_STREAMS, MAX_WATCH_STREAMS_PER_CALLER } from '../../../config/limits.js';
import { WIRE } from '../../../config/wire.js';
import { DatasetError } from '../../../errors/dataset-error.js';
import type { Action } from '../../plan/action.js';
import { projectionFor } from '../../present/present.js';
import type { RestResponse } from '../../present/response.js';
import { setsOf, type Scope } from '../../scope/scope.js';
import { replayLost, selectionOf } from '../change-events.js';
import { RESETS, WatchHub, type WatchGroup, type WatchSink } from '../watch/watch-groups.js';
import { findEntity } from '../collections.js';

type WatchAction = Extract<Action, { kind: 'watch' }>;

/** Streams open now, in all and per caller (a session, else an address): past them 429. */
const open = { all: 0, byCaller: new Map<string, number>() };
/** The watch groups of each server (its services'): it ends their streams before it closes. */
const hubs = new WeakMap<Scope['services'], WatchHub>();

function hubOf(services: Scope['services']): WatchHub {
  let hub = hubs.get(services);
  if (!hub) hubs.set(services, (hub = new WatchHub()));
  return hub;
}

/** Ends the watch streams of a server that is closing (each client's EventSource reconnects elsewhere, or later). */
export function endWatchStreams(services: Scope['services']): void {
  hubs.get(services)?.endAll();
}

export async function watch(scope: Scope, action: WatchAction): Promise<RestResponse> {
  const { dc } = action;
  if (!dc.model.globalStamp) {
    throw new DatasetError('INVALID_OPTION', `$method=watch follows the changes of a dataclass that tracks them: ${dc.name} has no "trackChanges": true in model.json`);
  }
  // everything a stream could refuse is refused now, before its first byte: the filter, the attributes, the entity
  projectionFor(dc.model, action.shape, scope);
  // (one entity: its key, whatever named it; the feed's changes of the others are not its)
  const only = action.target.kind === 'entity' ? String((await findEntity(scope, dc, action.target.selector)).getKey()) : undefined;
  // (a set: it exists, it is the session's and of this dataclass — 1802 otherwise)
  if (action.target.kind === 'set') {
    const set = await setsOf(scope).get(action.target.id, dc.name);
    if (set.keys.length > MAX_WATCHED_SET_MEMBERS) throw new DatasetError('LIMIT_EXCEEDED', `the entity set ${set.id} holds ${set.keys.length} entities; a watch follows a set of ${MAX_WATCHED_SET_MEMBERS} at most: watch the query that made it (/rest/${dc.name}?$filter=…&$method=watch)`);
  }
  if (only === undefined) await selectionOf(scope, action, undefined).first();
  const now = await scope.ds.getGlobalStamp();
  if (action.since !== undefined && action.since > now) throw new DatasetError('INVALID_HEADER', `Last-Event-ID ${action.since} is past this server's global stamp (${now}): it names no event this datastore sent`);
  admit(scope.caller);
  return stream(scope, action, now, only);
}

function admit(caller: string): void {
  const mine = open.byCaller.get(caller) ?? 0;
  if (open.all >= MAX_WATCH_STREAMS || mine >= MAX_WATCH_STREAMS_PER_CALLER) {
    throw new DatasetError('TOO_MANY_REQUESTS', open.all >= MAX_WATCH_STREAMS
      ? `the server has ${open.all} watch streams open, as many as it keeps: try again later`
      : `this session (or address) has ${mine} watch streams open, as many as one may: close one first`, [], { retryAfterS: 5 });
  }
  open.all++;
  open.byCaller.set(caller, mine + 1);
}

function leave(caller: string): void {
  open.all--;
  const mine = (open.byCaller.get(caller) ?? 1) - 1;
  if (mine <= 0) open.byCaller.delete(caller);
  else open.byCaller.set(caller, mine);
}

/** The reset a client too slow to take its events gets. */
const TOO_SLOW = 'event: reset\ndata: {"reason":"the client took its events too slowly"}\n\n';

/**
 * One stream as its group writes it: its body, the caller it counts for, and what came before its
 * ready. (A class, not closures: an idle stream keeps these few fields, not the request's scope.)
 */
class StreamSink implements WatchSink {
  readonly body = new PassThrough();
  group: WatchGroup | undefined;
  ended = false;
  /** what the group told before the stream's ready went (sent after it) */
  early: string[] | undefined = [];
  #earlyBytes = 0;

  constructor(readonly hub: WatchHub, readonly caller: string) {
    this.body.on('close', () => this.end());
  }

  send(text: string): void {
    if (this.ended) return;
    if (this.early) {
      this.early.push(text);
      if ((this.#earlyBytes += text.length) > MAX_WATCH_BUFFER_BYTES) this.end(TOO_SLOW);
      return;
    }
    this.body.write(text);
    // a client that does not take its events holds them here: past the bound it starts again
    if (this.body.writableLength > MAX_WATCH_BUFFER_BYTES) this.end(TOO_SLOW);
  }

  /** Sends the ready event, then what came before it. */
  start(ready: string): void {
    const told = this.early ?? [];
    this.early = undefined;
    this.send(ready + told.join(''));
  }

  end(last?: string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.group) this.hub.leave(this.group, this);
    leave(this.caller);
    if (last) this.body.end(last);
    else this.body.end();
  }
}

function stream(scope: Scope, action: WatchAction, now: number, only: string | undefined): RestResponse {
  const hub = hubOf(scope.services);
  const sink = new StreamSink(hub, scope.caller);
  void (async () => {
    try {
      if (action.since !== undefined && (await replayLost(scope, action.since))) {
        sink.end('event: reset\ndata: {"reason":"the changes since Last-Event-ID are no longer kept: read again"}\n\n');
        return;
      }
      const from = action.since ?? now;
      const { group, startsAt } = await hub.join(scope, action, only, from, action.since !== undefined, sink);
      await group.ready;
      if (sink.ended) return hub.leave(group, sink);
      sink.group = group;
      // ready once it follows: its id the stamp it is told every change after — where a resumed
      // stream resumes from (a connection lost before the replay came resumes there again), or
      // the stamp of the group it joined, which may tell it a few changes from before it opened
      sink.start(`retry: 2000\nevent: ready\nid: ${startsAt}\ndata: ${JSON.stringify({ [WIRE.GLOBAL_STAMP]: now })}\n\n`);
    } catch {
      sink.end(RESETS.failed);
    }
  })();
  return { kind: 'file', status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' }, body: sink.body };
}
