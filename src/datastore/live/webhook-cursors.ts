// The webhooks' cursors and leases as the core gives them (the statements:
// storage/system-tables/webhooks.ts): where each webhook's receiver is, and which instance
// delivers it, in the database — so that a restart resumes where the receiver is, and several
// instances deliver each webhook once.

import type { Storage } from '../../storage/adapter.js';
import { advanceWebhook, leaseWebhook, readWebhookCursors, releaseWebhook, webhookCursor, type WebhookCursorRow } from '../../storage/system-tables/webhooks.js';

export type { WebhookCursorRow as WebhookCursor };

export class WebhookCursors {
  constructor(private readonly storage: Storage) {}

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
