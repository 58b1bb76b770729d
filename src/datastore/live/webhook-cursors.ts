// The webhooks' cursors and leases as the core gives them (the statements:
// storage/system-tables/webhooks.ts): where each webhook's receiver is, and which instance
// delivers it, in the database — so that a restart resumes where the receiver is, and several
// instances deliver each webhook once.

import type { Storage } from '../../storage/adapter.js';
import { advanceWebhook, leaseWebhook, readWebhookCursors, releaseWebhook, webhookCursor, type WebhookCursorRow } from '../../storage/system-tables/webhooks.js';

export type { WebhookCursorRow as WebhookCursor };

export class WebhookCursors {
  #configured: readonly WebhookConfig[] = [];

  constructor(private readonly storage: Storage) {}

  /** The project's webhooks (webhooks.json): what a server started on this datastore delivers. */
  get configured(): readonly WebhookConfig[] {
    return this.#configured;
  }

  /** Sets the project's webhooks, once, when it opens. */
  configure(webhooks: readonly WebhookConfig[]): void {
    if (this.#configured.length > 0) throw new Error('the datastore has its webhooks already');
    this.#configured = webhooks;
  }

  /** The webhook's cursor, made at `stamp` the first time (a new webhook starts from now). */
  cursor(name: string, stamp: number): Promise<WebhookCursorRow> {
    return webhookCursor(this.storage, name, stamp);
  }

  list(names: readonly string[]): Promise<WebhookCursorRow[]> {
    return readWebhookCursors(this.storage, names);
  }

  /** Takes or keeps the webhook's lease for `owner` for `ms`: whether it holds it now. */
  lease(name: string, owner: string, ms: number): Promise<boolean> {
    const now = Date.now();
    return leaseWebhook(this.storage, name, owner, now, now + ms);
  }

  release(name: string, owner: string): Promise<void> {
    return releaseWebhook(this.storage, name, owner);
  }

  /** Moves the cursor from `from` to `stamp` while `owner` holds the lease: whether it moved. */
  advance(name: string, owner: string, from: number, stamp: number): Promise<boolean> {
    return advanceWebhook(this.storage, name, owner, from, stamp);
  }
}

/** One webhook of the project's webhooks.json (project/webhooks-file.ts reads and checks it). */
export interface WebhookConfig {
  /** its name: what its cursor, its headers and its metrics are known by */
  readonly name: string;
  readonly dataClass: string;
  /** a $filter (4D's query syntax) and its :n parameters: only the entities it selects are sent (others as `remove`) */
  readonly filter?: string;
  readonly params?: readonly unknown[];
  /** the attributes of each entity sent, as $attributes lists them (default: as a read shows them) */
  readonly attributes?: string;
  /** where the changes are POSTed */
  readonly url: string;
  /** what signs each body (HMAC-SHA256), as X-Dataset-Rest-Signature */
  readonly secret: string;
  /** the privileges the webhook reads with (default none: what a guest may read) */
  readonly privileges: readonly string[];
}
