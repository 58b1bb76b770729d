// 4D's order of an entity's events (reference §6.5): touched inside set(); around a save or a
// drop, the validate event, then the "during" event and the write in one transaction, then the
// after event once the write has committed. Attribute-level handlers run before the entity-level
// one; an error of a validate or "during" handler stops the action.

import type { StatementBudget, Storage } from '../../storage/adapter.js';
import { runIgnoring, runStopping, runTouched, type EntityEvent, type EventErrorReporter, type EventHandler, type EventKind, type EventTable } from './events.js';

/** What the events of one entity run with (`E`: Entity, which this file does not name). */
export interface EventContext<E> {
  readonly events: EventTable<E>;
  readonly entity: E;
  readonly dataClassName: string;
  readonly report: EventErrorReporter;
}

/** The touched handlers of an attribute just set: attribute level, then entity level. */
export function fireTouched<E>(c: EventContext<E>, attributeName: string): void {
  // (each handler gets an event of its own: what one does to it, the next does not see)
  const event = (): EntityEvent => ({ kind: 'touched', attributeName, dataClassName: c.dataClassName });
  const onAttr = c.events.attribute('touched', attributeName);
  if (onAttr) runTouched(onAttr, c.entity, event(), c.report);
  const onEntity = c.events.entity('touched');
  if (onEntity) runTouched(onEntity, c.entity, event(), c.report);
}

/** The attribute-level handlers of an event (for the attributes that qualify), then the entity-level one; the first error stops. */
export async function runEvents<E>(c: EventContext<E>, kind: EventKind, qualifies: (name: string) => boolean): Promise<void> {
  for (const name of c.events.attributes(kind)) {
    if (qualifies(name)) await runStopping(c.events.attribute(kind, name) as EventHandler<E>, c.entity, { kind, attributeName: name, dataClassName: c.dataClassName }, c.report);
  }
  const onEntity = c.events.entity(kind);
  if (onEntity) await runStopping(onEntity, c.entity, { kind, dataClassName: c.dataClassName }, c.report);
}

/**
 * The sequence around a write: the validate event, then the "during" event and the write in one
 * transaction (its statements within `budget`, the caller's request's), then the after event:
 * "failed" when the write failed, "success" once the write (and any enclosing transaction) has
 * committed.
 */
export async function aroundWrite<E>(
  c: EventContext<E>, storage: Storage, budget: StatementBudget | undefined, [validate, during]: [EventKind, EventKind], qualifies: (attribute: string) => boolean,
  write: () => Promise<string[]>, after: (attributes: string[], ok: boolean) => EntityEvent,
): Promise<void> {
  await runEvents(c, validate, qualifies);
  let writeFailed = false;
  let written: string[] = [];
  try {
    await storage.transaction(async () => {
      await runEvents(c, during, qualifies);
      try {
        written = await write();
      } catch (e) {
        writeFailed = true;
        throw e;
      }
    }, { budget });
  } catch (e) {
    if (writeFailed) await runAfter(c, after([], false));
    throw e;
  }
  await storage.afterCommit(() => runAfter(c, after(written, true)));
}

async function runAfter<E>(c: EventContext<E>, event: EntityEvent): Promise<void> {
  const handler = c.events.entity(event.kind);
  if (handler) await runIgnoring(handler, c.entity, event, c.report);
}
