// One webhook of webhooks.json, delivered (issue 36): the changes of its dataclass, judged as its
// session sees them (the privileges it is given; its filter), POSTed to its URL as the events a
// watch stream sends — at least once, in stamp order, retried with back-off, signed.
//
// The outbox is the tracked data itself: the webhook's cursor (a row of __dataset_webhooks) says
// up to which stamp the receiver has everything, and the changes after it are read again from
// __GlobalStamp and __DeletedRecords, so that a restart, a crash or a receiver down for a day
// loses nothing (unless model.json's deletedRecordsRetention lets drops go first: then the
// receiver is sent a `reset`, and reads again). The cursor moves only after a 2xx. Several
// instances: the one holding the webhook's lease delivers it; another takes over when the lease
// runs out (or at once, when the holder closes and gives it up).
//
// A delivery is one POST, JSON: {"webhook", "dataClass", "from", "to", "events": [{"event":
// "entity"|"remove"|"reset", "id": stamp, "data": …}]} — the changes with stamps in (from, to],
// WEBHOOK_EVENTS_PER_DELIVERY events at most (never splitting one stamp). Headers:
// X-Dataset-Rest-Webhook (its name), X-Dataset-Rest-Delivery ("name:from-to", the same on every
// retry: a receiver told twice keeps one), X-Dataset-Rest-Signature ("sha256=" and the hex
// HMAC-SHA256 of the body with the webhook's secret).

import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WEBHOOK_EVENTS_PER_DELIVERY, WEBHOOK_MAX_QUEUED_CHANGES } from '../../config/limits.js';
import type { ChangeBatch, Subscription, WebhookConfig } from '../../datastore/index.js';
import type { Logger } from '../../util/log.js';
import { authorize } from '../plan/authorize.js';
import { planRequest } from '../plan/request.js';
import { projectionFor } from '../present/present.js';
import { changeEvents, replayLost, selectionOf, type ChangeEvent, type WatchSpec } from '../run/change-events.js';
import { scopeFor, type Scope, type Services } from '../scope/scope.js';
import { REST_PREFIX } from '../request/constants.js';

/** What /metrics tells of a webhook. */
export interface WebhookState {
  readonly name: string;
  readonly dataClass: string;
  /** this instance holds the lease: it is the one delivering */
  delivering: boolean;
  /** the receiver has every change up to this stamp (the cursor, as this instance last knew it) */
  stamp: number;
  /** changes read and not yet delivered */
  pending: number;
  delivered: number;
  failed: number;
  /** failures since the last delivery that succeeded */
  failing: number;
  lastError?: string;
}

/** What waits to be delivered: a batch of the feed, or a reset (the changes since the cursor are gone). */
type Queued = ChangeBatch | { readonly reset: string; readonly since: number; readonly upto: number };

type Event = ChangeEvent | { readonly event: 'reset'; readonly id: number; readonly data: { readonly reason: string } };

/** Thrown through a delivery that is given up: the server closes, or another instance took the lease. */
class Stopped extends Error {}

export class WebhookDeliverer {
  readonly state: WebhookState;
  readonly #services: Services;
  readonly #hook: WebhookConfig;
  readonly #log: Logger;
  readonly #owner: string;
  readonly #scope: Scope;
  readonly #spec: WatchSpec;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** this instance delivers (it holds the lease and has subscribed) */
  #active = false;
  #subscription: Subscription | undefined;
  /** the batches read and not yet delivered, in stamp order */
  readonly #queue: Queued[] = [];
  /** the queue grew past WEBHOOK_MAX_QUEUED_CHANGES: the subscription was let go, to be made again from the cursor once the queue is delivered */
  #overflowed = false;
  #draining: Promise<void> | undefined;
  /** the stamp the batches delivered (or without an event: no POST, no cursor move) reach */
  #told = 0;
  #abort = new AbortController();
  /** the webhook's row is in the database */
  #made = false;
  /** a renewal under way (a slow database: the next tick waits for it) */
  #renewing = false;

  /** Plans the webhook's watch as its session (the filter, the attributes, the permission to read): refused at the start, with the webhook named. */
  constructor(services: Services, hook: WebhookConfig, log: Logger, owner: string) {
    this.#services = services;
    this.#hook = hook;
    this.#log = log;
    this.#owner = owner;
    this.state = { name: hook.name, dataClass: hook.dataClass, delivering: false, stamp: 0, pending: 0, delivered: 0, failed: 0, failing: 0 };
    const session = services.core.sessions.guest();
    if (hook.privileges.length > 0) session.setPrivileges({ privileges: [...hook.privileges], userName: `webhook:${hook.name}` });
    const query = [`$method=watch`];
    if (hook.filter !== undefined) query.push(`$filter=${encodeURIComponent(hook.filter)}`);
    if (hook.params !== undefined) query.push(`$params=${encodeURIComponent(JSON.stringify(hook.params))}`);
    if (hook.attributes !== undefined) query.push(`$attributes=${encodeURIComponent(hook.attributes)}`);
    const request = { method: 'GET', url: `${REST_PREFIX}/${encodeURIComponent(hook.dataClass)}?${query.join('&')}`, headers: {}, origin: '', caller: `webhook:${hook.name}` };
    this.#scope = scopeFor(services, request, session);
    const action = planRequest(request, this.#scope);
    if (action.kind !== 'watch') throw new Error(`webhook ${hook.name}: planned as ${action.kind}`);
    authorize(action, this.#scope);
    this.#spec = action;
  }

  /** What the watch could refuse is refused now, before the first delivery: the filter, the attributes (as a stream's start does). */
  async check(): Promise<void> {
    projectionFor(this.#spec.dc.model, this.#spec.shape, this.#scope);
    await selectionOf(this.#scope, this.#spec, undefined).first();
  }

  /** Starts taking the lease (now, then every renewMs) and, while held, delivering. */
  start(): void {
    void this.#renew();
    this.#timer = setInterval(() => void this.#renew(), this.#services.webhookTiming.renewMs);
    this.#timer.unref();
  }

  /** Stops delivering (the delivery under way is given up: it comes again later) and gives the lease up. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#letGo();
    await this.#draining?.catch(() => undefined);
    await this.#services.core.webhooks.release(this.#hook.name, this.#owner).catch(() => undefined);
  }

  async #renew(): Promise<void> {
    if (this.#stopped || this.#renewing) return;
    this.#renewing = true;
    try {
      await this.#renewLease();
    } finally {
      this.#renewing = false;
    }
  }

  async #renewLease(): Promise<void> {
    const cursors = this.#services.core.webhooks;
    try {
      // (a new webhook's cursor is made first, at now: the lease is a column of its row)
      if (!this.#made) {
        await cursors.cursor(this.#hook.name, await this.#services.ds.getGlobalStamp());
        this.#made = true;
      }
      const held = await cursors.lease(this.#hook.name, this.#owner, this.#services.webhookTiming.leaseMs);
      if (this.#stopped) return;
      if (!held) {
        if (this.#active) this.#log.info({ webhook: this.#hook.name }, 'webhook: another instance delivers it now');
        this.#letGo();
        return;
      }
      if (!this.#active) return await this.#begin();
      // batches without an event moved nothing: the cursor catches up now and then (not at every stamp)
      if (this.#queue.length === 0 && !this.#draining && this.#told > this.state.stamp) await this.#advance(this.#told);
      if (this.#overflowed && this.#queue.length === 0 && !this.#draining) await this.#subscribe(this.state.stamp);
    } catch (err) {
      this.#log.warn({ err, webhook: this.#hook.name }, 'webhook: taking its lease or its cursor failed (tried again soon)');
    }
  }

  /** Holding the lease: from the cursor (made at now for a new webhook), what the receiver missed, then what comes. */
  async #begin(): Promise<void> {
    const [cursor] = await this.#services.core.webhooks.list([this.#hook.name]);
    // (its row removed by hand: made again, from now, at the next renewal)
    if (!cursor) {
      this.#made = false;
      return;
    }
    this.#abort = new AbortController();
    this.#active = true;
    this.state.delivering = true;
    this.state.stamp = this.#told = cursor.stamp;
    try {
      if (await replayLost(this.#scope, cursor.stamp)) {
        const now = await this.#services.ds.getGlobalStamp();
        this.#log.warn({ webhook: this.#hook.name, stamp: cursor.stamp }, 'webhook: the changes since its cursor are no longer kept (deletedRecordsRetention): its receiver is sent a reset');
        this.#push({ reset: 'the changes since the last delivery are no longer kept: read again', since: cursor.stamp, upto: now });
        await this.#subscribe(now);
      } else await this.#subscribe(cursor.stamp);
    } catch (err) {
      // (not subscribed: begun again at the next renewal, from the cursor)
      this.#letGo();
      throw err;
    }
  }

  async #subscribe(since: number): Promise<void> {
    this.#overflowed = false;
    this.#subscription?.close();
    this.#subscription = await this.#services.core.changes.subscribe(this.#spec.dc.model, (batch) => this.#take(batch), since);
    if (!this.#active) this.#subscription.close();
  }

  /** A batch from the feed: queued (bounded: past the bound, let go, and read again from the data later). */
  #take(batch: ChangeBatch): void {
    if (!this.#active) return;
    if (this.#queue.length > 0 && this.state.pending + batch.changes.length > WEBHOOK_MAX_QUEUED_CHANGES) {
      this.#overflowed = true;
      this.#subscription?.close();
      this.#subscription = undefined;
      return;
    }
    this.#push(batch);
  }

  #push(item: Queued): void {
    this.#queue.push(item);
    this.state.pending += 'changes' in item ? item.changes.length : 1;
    this.#kick();
  }

  /** Delivers the queue, unless that is under way already. */
  #kick(): void {
    if (this.#draining) return;
    this.#draining = this.#drain().catch((err: unknown) => {
      if (err instanceof Stopped) return;
      // (not expected: every failure is retried. Let go: the next renewal begins again from the cursor)
      this.#log.error({ err, webhook: this.#hook.name }, 'webhook: delivering stopped; it resumes from its cursor');
      this.#letGo();
    }).finally(() => {
      this.#draining = undefined;
      // (what came between the queue's end and now)
      if (this.#active && this.#queue.length > 0) this.#kick();
    });
  }

  /** Lets go of what this instance delivers: the lease was lost, or the server closes. */
  #letGo(): void {
    this.#active = false;
    this.state.delivering = false;
    this.#abort.abort();
    this.#subscription?.close();
    this.#subscription = undefined;
    this.#queue.length = 0;
    this.state.pending = 0;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      if (!this.#active) throw new Stopped();
      const item = this.#queue[0];
      if ('reset' in item) {
        await this.#deliver(item.since, item.upto, [{ event: 'reset', id: item.upto, data: { reason: item.reset } }]);
      } else if (item.changes.length > 0) {
        const events = await this.#retrying(() => this.#events(item));
        for (const { to, events: part } of chunks(events, item.upto)) await this.#deliver(this.state.stamp, to, part);
      }
      this.#told = Math.max(this.#told, item.upto);
      this.#queue.shift();
      this.state.pending -= 'changes' in item ? item.changes.length : 1;
    }
  }

  async #events(batch: ChangeBatch): Promise<ChangeEvent[]> {
    const told = await changeEvents(this.#scope, this.#spec, batch.changes);
    // (a webhook's session is its own, never stored: it does not end; it watches no set)
    if (!Array.isArray(told)) throw new Error(`the webhook's watch ended: ${told}`);
    return told;
  }

  /** One delivery, POSTed until it is taken (a 2xx), then the cursor moved past it. */
  async #deliver(from: number, to: number, events: readonly Event[]): Promise<void> {
    const hook = this.#hook;
    const body = JSON.stringify({ webhook: hook.name, dataClass: hook.dataClass, from, to, events });
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'dataset-rest-webhook',
      'x-dataset-rest-webhook': hook.name,
      'x-dataset-rest-delivery': `${hook.name}:${from}-${to}`,
      'x-dataset-rest-signature': `sha256=${createHmac('sha256', hook.secret).update(body).digest('hex')}`,
    };
    await this.#retrying(async () => {
      const timeout = AbortSignal.timeout(this.#services.webhookTiming.timeoutMs);
      const res = await fetch(hook.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.any([this.#abort.signal, timeout]) });
      // (the answer's body is not wanted, and may be of any size: let go of it unread)
      await res.body?.cancel().catch(() => undefined);
      if (res.status < 200 || res.status > 299) throw new Error(`${hook.url} answered ${res.status}`);
    });
    this.state.delivered++;
    await this.#advance(to);
  }

  /** The cursor moved to `to` — only while this instance holds the lease and the cursor is where it delivered from. */
  async #advance(to: number): Promise<void> {
    const moved = await this.#retrying(() => this.#services.core.webhooks.advance(this.#hook.name, this.#owner, this.state.stamp, to));
    if (!moved) {
      this.#letGo();
      throw new Stopped();
    }
    this.state.stamp = to;
    this.#told = Math.max(this.#told, to);
  }

  /** Runs `attempt` until it succeeds, waiting retryFirstMs, then twice as long each time up to retryLastMs; given up (Stopped) when this instance stops delivering. */
  async #retrying<T>(attempt: () => Promise<T>): Promise<T> {
    const { retryFirstMs, retryLastMs } = this.#services.webhookTiming;
    let wait = retryFirstMs;
    for (;;) {
      if (!this.#active) throw new Stopped();
      try {
        const value = await attempt();
        this.state.failing = 0;
        return value;
      } catch (err) {
        if (!this.#active || err instanceof Stopped) throw new Stopped();
        this.state.failed++;
        this.state.failing++;
        this.state.lastError = (err as Error).message;
        // (said once, then every tenth time: a receiver down for hours is no flood of lines)
        if (this.state.failing === 1 || this.state.failing % 10 === 0) this.#log.warn({ webhook: this.#hook.name, failures: this.state.failing, error: this.state.lastError }, `webhook: delivery failed, retried in ${wait} ms`);
      }
      try {
        await sleep(wait, undefined, { signal: this.#abort.signal });
      } catch {
        throw new Stopped();
      }
      wait = Math.min(wait * 2, retryLastMs);
    }
  }
}

/** A batch's events cut into deliveries of WEBHOOK_EVENTS_PER_DELIVERY at most, each ending with a stamp's last event (the last one reaching `upto`). */
function chunks(events: readonly ChangeEvent[], upto: number): { to: number; events: ChangeEvent[] }[] {
  const out: { to: number; events: ChangeEvent[] }[] = [];
  let part: ChangeEvent[] = [];
  for (const e of events) {
    part.push(e);
    if (e.id !== undefined && part.length >= WEBHOOK_EVENTS_PER_DELIVERY) {
      out.push({ to: e.id, events: part });
      part = [];
    }
  }
  if (part.length > 0) out.push({ to: upto, events: part });
  else if (out.length > 0) out[out.length - 1].to = upto;
  return out;
}
