// Entity events (4D's entity class events, reference §6.5): the handlers a dataclass holds, the
// $event objects they receive, and how their results become errors. Entity.save() and drop() run
// them, so a save from REST and a save from user code run the same events.

import { currentRequestId } from '../access/caller.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { ERRORS } from '../../errors/registry.js';
import { createLogger, type Logger } from '../../util/log.js';

export const EVENT_KINDS = ['touched', 'validateSave', 'saving', 'afterSave', 'validateDrop', 'dropping', 'afterDrop'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];
/** Events that also exist per attribute (afterSave and afterDrop are entity-level only, §6.5). */
export const ATTRIBUTE_EVENT_KINDS: ReadonlySet<EventKind> = new Set(['touched', 'validateSave', 'saving', 'validateDrop', 'dropping']);

/** The `$event` an entity event receives. */
export interface EntityEvent {
  readonly kind: EventKind;
  readonly dataClassName: string;
  /** attribute-level events only */
  readonly attributeName?: string;
  /** afterSave: the attributes the save wrote */
  readonly savedAttributes?: readonly string[];
  /** afterSave */
  readonly saveStatus?: 'success' | 'failed';
  /** afterDrop: the storage attributes of the dropped entity */
  readonly droppedAttributes?: readonly string[];
  /** afterDrop */
  readonly dropStatus?: 'success' | 'failed';
}

/** What an event returns to stop a save or a drop (reference §6.5); componentSignature is always "DBEV". */
export interface EventErrorObject {
  errCode: number;
  message: string;
  extraDescription?: unknown;
  /** validate events only: a serious validation error (default: mild) */
  seriousError?: boolean;
}

/**
 * An event handler: called with `this` the entity (`E`: Entity — EntityEventHandler, entity.ts;
 * generic here so that this file names no entity class). It may be async.
 */
export type EventHandler<E> = (this: E, event: EntityEvent) => unknown;

/** Reports errors of events that cannot stop anything (touched, afterSave, afterDrop). */
export type EventErrorReporter = (info: { kind: EventKind; dataClassName: string; attributeName?: string; error: unknown }) => void;

/** A reporter writing to a logger (the server gives its own; by default one at warn level on stderr). */
export function eventErrorLogger(logger: () => Logger): EventErrorReporter {
  return ({ kind, dataClassName, attributeName, error }) => {
    logger().warn({ err: error, reqId: currentRequestId(), event: kind, dataClass: dataClassName, attribute: attributeName }, `the ${kind} event of ${dataClassName}${attributeName ? `.${attributeName}` : ''} failed (ignored)`);
  };
}

let defaultLogger: Logger | undefined;
export const logEventError: EventErrorReporter = eventErrorLogger(() => (defaultLogger ??= createLogger('warn')));

/** The handlers of one dataclass: per kind, the entity-level one and the attribute-level ones. */
export class EventTable<E> {
  readonly #entity = new Map<EventKind, EventHandler<E>>();
  readonly #attribute = new Map<EventKind, Map<string, EventHandler<E>>>();

  set(kind: EventKind, handler: EventHandler<E>, attributeName?: string): void {
    if (attributeName === undefined) this.#entity.set(kind, handler);
    else {
      let byName = this.#attribute.get(kind);
      if (!byName) this.#attribute.set(kind, (byName = new Map()));
      byName.set(attributeName, handler);
    }
  }

  entity(kind: EventKind): EventHandler<E> | undefined {
    return this.#entity.get(kind);
  }

  attribute(kind: EventKind, name: string): EventHandler<E> | undefined {
    return this.#attribute.get(kind)?.get(name);
  }

  /** the attribute names with a handler for this kind, in the order they were defined */
  attributes(kind: EventKind): string[] {
    return [...(this.#attribute.get(kind)?.keys() ?? [])];
  }

  get empty(): boolean {
    return this.#entity.size === 0 && this.#attribute.size === 0;
  }
}

function isErrorObject(v: unknown): v is EventErrorObject {
  return v !== null && typeof v === 'object' && (typeof (v as EventErrorObject).errCode === 'number' || typeof (v as EventErrorObject).message === 'string');
}

/**
 * The error for an event that stopped a save or a drop: one DBEV error (the event's errCode and
 * message), marked mild or serious as 4D's statuses say (§6.5: saving/dropping are always serious).
 */
function eventError(kind: EventKind, dataClassName: string, obj: EventErrorObject, threw = false, attributeName?: string): DatasetError {
  const validate = kind === 'validateSave' || kind === 'validateDrop';
  const serious = !validate || obj.seriousError === true || threw;
  const message = typeof obj.message === 'string' ? obj.message : `the ${kind} event of ${dataClassName} refused the ${kind.endsWith('Drop') || kind === 'dropping' ? 'drop' : 'save'}`;
  return new DatasetError('ENTITY_NOT_SAVED', message, [], {
    items: [{
      name: 'ENTITY_NOT_SAVED',
      message,
      errCode: Number.isInteger(obj.errCode) ? obj.errCode : 0,
      componentSignature: 'DBEV',
      ...(obj.extraDescription === undefined ? {} : { extraDescription: obj.extraDescription }),
      ...(attributeName === undefined ? {} : { attributeName }),
    }],
    validation: {
      event: kind,
      serious,
      status: serious ? 'serious validation error' : 'validation failed',
      statusText: serious ? 'Serious Validation Error' : 'Mild Validation Error',
    },
  });
}

/**
 * Runs one handler of an event that can stop the action: its error object (returned) or its
 * exception becomes a DatasetError; anything else lets the action go on.
 */
export async function runStopping<E>(handler: EventHandler<E>, entity: E, event: EntityEvent, report: EventErrorReporter): Promise<void> {
  let result: unknown;
  try {
    result = await handler.call(entity, event);
  } catch (error) {
    // The application's own refusal, with its status and code, and the core's refusal of a drop
    // the handler made (a relation's deleteRule, writes/delete-rules.ts): sent as they are
    if (error instanceof DatasetError && (error.code === 'REFUSED' || error.code === 'DROP_REFUSED_BY_RELATION')) throw error;
    // Any other exception is user code failing, not a refusal: reported as a serious DBEV error
    // whose message names the event; the cause is logged, not sent (ARCHITECTURE §6).
    report({ kind: event.kind, dataClassName: event.dataClassName, attributeName: event.attributeName, error });
    const where = `${event.dataClassName}${event.attributeName ? `.${event.attributeName}` : ''}`;
    throw eventError(event.kind, event.dataClassName, { errCode: ERRORS.EVENT_FAILED.errCode, message: `The ${event.kind} event of ${where} failed with an exception` }, true, event.attributeName);
  }
  if (isErrorObject(result)) throw eventError(event.kind, event.dataClassName, result, false, event.attributeName);
}

/** Runs a handler whose errors change nothing (touched, afterSave, afterDrop): they are reported and ignored. */
export async function runIgnoring<E>(handler: EventHandler<E>, entity: E, event: EntityEvent, report: EventErrorReporter): Promise<void> {
  try {
    await handler.call(entity, event);
  } catch (error) {
    report({ kind: event.kind, dataClassName: event.dataClassName, attributeName: event.attributeName, error });
  }
}

/** touched runs synchronously inside set(); an async handler's failure is reported when it settles. */
export function runTouched<E>(handler: EventHandler<E>, entity: E, event: EntityEvent, report: EventErrorReporter): void {
  try {
    const r = handler.call(entity, event);
    if (r instanceof Promise) r.catch((error: unknown) => report({ kind: 'touched', dataClassName: event.dataClassName, attributeName: event.attributeName, error }));
  } catch (error) {
    report({ kind: 'touched', dataClassName: event.dataClassName, attributeName: event.attributeName, error });
  }
}
