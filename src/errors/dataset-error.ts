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
  /** replaces the registry's status (400 to 599): a permission refusal answers 401 to a guest session, 403 to a logged-in one; an application's refusal the status it chooses */
  readonly status?: number;
  /** replaces the registry's errCode of the (first) error: an application's own code (a positive integer) */
  readonly errCode?: number;
  /** what caused it (an exception a function threw): logged by the server, never sent */
  readonly cause?: unknown;
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

  /**
   * `new DatasetError(name, message, options?)`, or `(name, message, more, options?)` with the
   * errors it follows (innermost first). From a function or an event, an application refuses
   * with its own status and code: `throw new DatasetError('REFUSED', 'no stock left for item 12',
   * { status: 409, errCode: 20001 })`.
   */
  constructor(name: ErrorName, message: string, moreOrOptions: readonly ErrorItem[] | DatasetErrorOptions = [], lastOptions: DatasetErrorOptions = {}) {
    const more: readonly ErrorItem[] = Array.isArray(moreOrOptions) ? moreOrOptions : [];
    const options: DatasetErrorOptions = Array.isArray(moreOrOptions) ? lastOptions : (moreOrOptions as DatasetErrorOptions);
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DatasetError';
    if (!Object.hasOwn(ERRORS, name)) throw new TypeError(`DatasetError: ${JSON.stringify(name)} is no registered error name (docs/errors.md lists them; REFUSED is the application's own)`);
    if (options.status !== undefined && !(Number.isInteger(options.status) && options.status >= 400 && options.status <= 599)) throw new RangeError(`DatasetError: status ${String(options.status)} is no HTTP error status (400 to 599)`);
    if (options.errCode !== undefined && !(Number.isInteger(options.errCode) && options.errCode > 0)) throw new RangeError(`DatasetError: errCode ${String(options.errCode)} is not a positive integer`);
    const first: ErrorItem = { name, message, ...(options.errCode === undefined ? {} : { errCode: options.errCode }), ...(options.attributeName === undefined ? {} : { attributeName: options.attributeName }) };
    this.items = options.items ?? [first, ...more];
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
