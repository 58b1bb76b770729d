// DatasetError: the typed error every layer throws for an expected failure. It can carry a
// stack of errors (4D reports save failures innermost first: 1263, 1046, 1517). An error an
// entity event returned (reference §6.5) carries its own errCode, the signature "DBEV" and
// whether it is a mild or a serious validation error.

import { ERRORS, type ErrorName } from './registry.js';

export interface WireError {
  message: string;
  componentSignature: string;
  errCode: number;
  /** only for errors returned by entity events that give one */
  extraDescription?: unknown;
  /** the attribute the error is about, when there is one */
  attributeName?: string;
}

export interface ErrorItem {
  readonly name: ErrorName;
  readonly message: string;
  /** overrides the registry's errCode (entity event errors: the event's own code) */
  readonly errCode?: number;
  /** overrides the registry's signature (entity event errors: "DBEV") */
  readonly componentSignature?: string;
  readonly extraDescription?: unknown;
  /** the attribute the error is about (a notNull or unique refusal, an attribute's event): sent as `attributeName`, so a form can show it beside its field */
  readonly attributeName?: string;
}

/** Set when an entity event stopped a save or a drop: 4D's statuses for __STATUS (reference §6.5, §3.14). */
export interface ValidationFailure {
  /** the event that refused */
  readonly event: string;
  readonly serious: boolean;
  /** 4D's `dk status validation failed` / `dk status serious validation error` */
  readonly status: 'validation failed' | 'serious validation error';
  readonly statusText: 'Mild Validation Error' | 'Serious Validation Error';
}

export interface DatasetErrorOptions {
  /** replaces the items built from name, message and more */
  readonly items?: readonly ErrorItem[];
  readonly validation?: ValidationFailure;
  /** replaces the registry's status: a permission refusal answers 401 to a guest session, 403 to a logged-in one */
  readonly status?: number;
  /** seconds for the Retry-After header of a 429 (quotas) */
  readonly retryAfterS?: number;
  /** the attribute the (first) error is about */
  readonly attributeName?: string;
}

export class DatasetError extends Error {
  readonly items: readonly ErrorItem[];
  /** present when an entity event stopped the action */
  readonly validation?: ValidationFailure;
  readonly retryAfterS?: number;
  readonly #status?: number;

  constructor(name: ErrorName, message: string, more: readonly ErrorItem[] = [], options: DatasetErrorOptions = {}) {
    super(message);
    this.name = 'DatasetError';
    this.items = options.items ?? [{ name, message, ...(options.attributeName === undefined ? {} : { attributeName: options.attributeName }) }, ...more];
    if (options.validation) this.validation = options.validation;
    if (options.status !== undefined) this.#status = options.status;
    if (options.retryAfterS !== undefined) this.retryAfterS = options.retryAfterS;
  }

  /** The registry name of the first (innermost) error. */
  get code(): ErrorName {
    return this.items[0].name;
  }

  get status(): number {
    return this.#status ?? ERRORS[this.code].status;
  }

  toWire(): WireError[] {
    return this.items.map(({ name, message, errCode, componentSignature, extraDescription, attributeName }) => ({
      message,
      componentSignature: componentSignature ?? ERRORS[name].signature,
      errCode: errCode ?? ERRORS[name].errCode,
      ...(extraDescription === undefined ? {} : { extraDescription }),
      ...(attributeName === undefined ? {} : { attributeName }),
    }));
  }
}

export function isDatasetError(e: unknown): e is DatasetError {
  return e instanceof DatasetError;
}
