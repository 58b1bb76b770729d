// DatasetError: the typed error every layer throws for an expected failure. It can carry a
// stack of errors (4D reports save failures innermost first: 1263, 1046, 1517).

import { ERRORS, type ErrorName } from './registry.js';

export interface WireError {
  message: string;
  componentSignature: string;
  errCode: number;
}

export interface ErrorItem {
  readonly name: ErrorName;
  readonly message: string;
}

export class DatasetError extends Error {
  readonly items: readonly ErrorItem[];

  constructor(name: ErrorName, message: string, more: readonly ErrorItem[] = []) {
    super(message);
    this.name = 'DatasetError';
    this.items = [{ name, message }, ...more];
  }

  /** The registry name of the first (innermost) error. */
  get code(): ErrorName {
    return this.items[0].name;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  toWire(): WireError[] {
    return this.items.map(({ name, message }) => ({
      message,
      componentSignature: ERRORS[name].signature,
      errCode: ERRORS[name].errCode,
    }));
  }
}

export function isDatasetError(e: unknown): e is DatasetError {
  return e instanceof DatasetError;
}
