// The project's webhooks (webhooks.json), delivered while a server runs (deliverer.ts): each
// planned as its watch when the server starts (a bad filter or attribute stops the start, with the
// webhook named), then delivered by whichever instance holds its lease.

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Logger } from '../../util/log.js';
import type { Services } from '../scope/scope.js';
import { WebhookDeliverer, type WebhookState } from './deliverer.js';

export type { WebhookState };

/** The webhooks being delivered, by datastore (what /metrics reads: every server built on it). */
const running = new WeakMap<Services['ds'], Set<WebhookDeliverer>>();

/** Starts delivering the project's webhooks (each checked first: a mistake stops the start); resolves to what stops them (the server's close). */
export async function startWebhooks(services: Services, log: Logger): Promise<() => Promise<void>> {
  const configured = services.core.webhooks.configured;
  if (configured.length === 0) return async () => undefined;
  // (who holds a lease: this process, among the instances on the database)
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const deliverers: WebhookDeliverer[] = [];
  for (const hook of configured) {
    try {
      const d = new WebhookDeliverer(services, hook, log, owner);
      await d.check();
      deliverers.push(d);
    } catch (e) {
      const why = e instanceof DatasetError ? e.message : (e as Error).message;
      throw new Error(`webhooks.json: the webhook "${hook.name}" cannot watch ${hook.dataClass} as it is given: ${why}`, { cause: e });
    }
  }
  let set = running.get(services.ds);
  if (!set) running.set(services.ds, (set = new Set()));
  for (const d of deliverers) {
    set.add(d);
    d.start();
  }
  log.info({ webhooks: configured.map((h) => h.name) }, `delivering ${configured.length} webhook${configured.length === 1 ? '' : 's'}`);
  return async () => {
    for (const d of deliverers) set.delete(d);
    await Promise.all(deliverers.map((d) => d.stop()));
  };
}

/** The state of the webhooks delivered on this datastore, one per name (a name delivered by this process in any of its servers counts as delivering). */
export function webhookStates(ds: Services['ds']): WebhookState[] {
  const byName = new Map<string, WebhookState>();
  for (const d of running.get(ds) ?? []) {
    const seen = byName.get(d.state.name);
    if (!seen || (!seen.delivering && d.state.delivering)) byName.set(d.state.name, d.state);
  }
  return [...byName.values()];
}
