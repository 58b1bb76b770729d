// Live data (issue 36): a view of a dataclass that tracks its changes follows them through the
// server's watch stream — `GET …?$method=watch`, Server-Sent Events with the page's session cookie.
// The stream says `ready` (the global stamp it follows from), then `entity` (an entity as a read of
// the same URL and $attributes shows it) when one enters or changes in what is watched, `remove`
// ({"__KEY"}) when one leaves or is dropped, and `reset` when the client must read again.
//
// A connection lost is resumed by the browser itself (EventSource sends Last-Event-ID: nothing is
// missed). A `reset`, or a stream the server refused (EventSource gives up on a status not 200),
// is opened anew after a pause; what came between may be missed, so the view reads again once the
// new stream is ready (`onReady(…, again: true)`).

import { announce, type JsonObject } from './api';
import type { DataClassInfo } from './catalog';

/** connecting: the first stream is opening; live: changes are followed; reconnecting: they will be again soon; off: given up */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'off';

export interface LiveHandlers {
  /** an entity entered or changed in what is watched (shaped as the watched read shows it) */
  readonly onEntity: (entity: JsonObject) => void;
  /** an entity left or was dropped (also sent for keys the view never had: ignore those) */
  readonly onRemove: (key: string) => void;
  /**
   * A stream follows the changes after `stamp` (the datastore's global stamp). `again`: it is a
   * new stream after a reset or a failure, so changes may have been missed: the view reads again.
   * (The first one: a view read before `stamp` may have missed what changed in between.)
   */
  readonly onReady: (stamp: number, again: boolean) => void;
  readonly onState?: (state: LiveState, detail?: string) => void;
}

/** The attribute a tracked dataclass has (model.json's "trackChanges": true, or 4D's declared one). */
export const GLOBAL_STAMP = '__GlobalStamp';

/** Whether a dataclass tracks its changes, so that it can be watched: its catalog lists `__GlobalStamp`. */
export function tracksChanges(dc: DataClassInfo): boolean {
  return dc.attributes.some((a) => a.name === GLOBAL_STAMP);
}

/** `url` (a read, with its query) as the watch of the same read. */
export function watchUrl(url: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}$method=watch`;
}

/** streams refused in a row before giving up (an untracked dataclass, a filter the server refuses, a session that must log in) */
const MAX_FAILURES = 5;
/** the first pause before a refused stream is tried again; doubled each time */
const FIRST_PAUSE_MS = 1000;
/** resets closer together than this are waited for (a stream reset at once, again and again, is not hammered) */
const RESET_CALM_MS = 5000;

/**
 * Follows the watch of `url` (a read URL; `$method=watch` is added) until the function it returns
 * is called. Handlers are called for the events of the current stream only.
 */
export function follow(url: string, handlers: LiveHandlers): () => void {
  const target = watchUrl(url);
  let source: EventSource | undefined;
  let stopped = false;
  let streams = 0;
  let failures = 0;
  let lastReset = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** given up: the window regaining the focus tries once more (refused again, it is off again) */
  const retry = () => {
    if (stopped || source) return;
    open();
  };
  const state = (s: LiveState, detail?: string) => {
    if (!stopped) handlers.onState?.(s, detail);
  };

  const later = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(open, ms);
  };

  function open(): void {
    if (stopped) return;
    const again = streams++ > 0;
    // (same origin: the session cookie goes with it; withCredentials also when the page is served elsewhere)
    const es = new EventSource(target, { withCredentials: true });
    // (listed with the page's other requests: "show the requests")
    announce({ method: 'GET', url: new URL(target, location.href).href, headers: { accept: 'text/event-stream' } });
    source = es;
    state(again ? 'reconnecting' : 'connecting');
    let ready = false;
    const mine = () => !stopped && source === es;
    es.addEventListener('ready', (e) => {
      if (!mine()) return;
      failures = 0;
      state('live');
      // (the browser's own reconnections resume with Last-Event-ID: their ready is no news)
      if (ready) return;
      ready = true;
      handlers.onReady(stampOf((e as MessageEvent<string>).data), again);
    });
    es.addEventListener('entity', (e) => {
      if (!mine()) return;
      const data = parse((e as MessageEvent<string>).data);
      if (data && data.__KEY !== undefined) handlers.onEntity(data);
    });
    es.addEventListener('remove', (e) => {
      if (!mine()) return;
      const data = parse((e as MessageEvent<string>).data);
      if (data && data.__KEY !== undefined) handlers.onRemove(String(data.__KEY));
    });
    es.addEventListener('reset', (e) => {
      if (!mine()) return;
      // the server ends this stream: a new one (without Last-Event-ID), then the view reads again
      es.close();
      source = undefined;
      const reason = parse((e as MessageEvent<string>).data)?.reason;
      state('reconnecting', typeof reason === 'string' ? reason : undefined);
      const now = Date.now();
      later(now - lastReset < RESET_CALM_MS ? RESET_CALM_MS : 0);
      lastReset = now;
    });
    es.addEventListener('error', () => {
      if (!mine()) return;
      if (es.readyState !== EventSource.CLOSED) {
        // the connection was lost: the browser reconnects by itself, resuming with Last-Event-ID
        state('reconnecting');
        return;
      }
      // refused (a status not 200: a 400, a 401, a 429…): tried again after a pause, a few times
      source = undefined;
      failures++;
      if (failures >= MAX_FAILURES) {
        state('off', 'the server does not let this view follow its changes');
        window.removeEventListener('focus', retry);
        window.addEventListener('focus', retry, { once: true });
        return;
      }
      state('reconnecting');
      later(FIRST_PAUSE_MS * 2 ** (failures - 1));
    });
  }

  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    window.removeEventListener('focus', retry);
    source?.close();
    source = undefined;
  };
}

function parse(text: string): JsonObject | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

function stampOf(text: string): number {
  const stamp = parse(text)?.[GLOBAL_STAMP];
  return typeof stamp === 'number' ? stamp : Number.NaN;
}
