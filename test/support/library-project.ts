// The project the delete-rule tests share (issue 38, "Relations keep their promises"): 1→N
// relations with each of 4D's delete controls, declared in model.json's `deleteRule` — an
// Author's books go with it (cascade), and a book's chapters with the book (cascade again, two
// levels), while a book on loan (refuse) or a publisher with books (refuse) cannot be dropped; an
// author's letters stay (leave, the default); a category's children go with it (cascade on the
// dataclass itself, whose data may hold a cycle). Chapter has drop events (they record themselves,
// and a chapter titled "keep" refuses its drop); saving a Removal drops the author it names (a
// drop inside a save, so inside an $atomic batch); Author has functions that drop. The guarded
// variant adds permissions and row filters (restrict()) that a cascade or a refusal meets.

import { writeLiveProject } from './live-project.js';

const KEY = { name: 'ID', type: 'long', identifying: true, autoincrement: true };

export const LIBRARY_MODEL = {
  name: 'Library',
  dataClasses: [
    {
      name: 'Author',
      attributes: [KEY, { name: 'name', type: 'string' },
        { name: 'books', kind: 'relatedEntities', type: 'BookSelection', path: 'author', deleteRule: 'cascade' },
        { name: 'letters', kind: 'relatedEntities', type: 'LetterSelection', path: 'author' }],
    },
    {
      name: 'Publisher',
      attributes: [KEY, { name: 'name', type: 'string' }, { name: 'titles', kind: 'relatedEntities', type: 'BookSelection', path: 'publisher', deleteRule: 'refuse' }],
    },
    {
      name: 'Book',
      trackChanges: true,
      attributes: [KEY, { name: 'title', type: 'string' },
        { name: 'author', kind: 'relatedEntity', type: 'Author' },
        { name: 'publisher', kind: 'relatedEntity', type: 'Publisher' },
        { name: 'chapters', kind: 'relatedEntities', type: 'ChapterSelection', path: 'book', deleteRule: 'cascade' },
        { name: 'loans', kind: 'relatedEntities', type: 'LoanSelection', path: 'book', deleteRule: 'refuse' }],
    },
    { name: 'Chapter', attributes: [KEY, { name: 'title', type: 'string' }, { name: 'book', kind: 'relatedEntity', type: 'Book' }] },
    { name: 'Loan', attributes: [KEY, { name: 'borrower', type: 'string' }, { name: 'book', kind: 'relatedEntity', type: 'Book' }] },
    { name: 'Letter', attributes: [KEY, { name: 'text', type: 'string' }, { name: 'author', kind: 'relatedEntity', type: 'Author' }] },
    {
      name: 'Category',
      attributes: [KEY, { name: 'name', type: 'string' }, { name: 'parent', kind: 'relatedEntity', type: 'Category' },
        { name: 'children', kind: 'relatedEntities', type: 'CategorySelection', path: 'parent', deleteRule: 'cascade' }],
    },
    { name: 'Removal', attributes: [KEY, { name: 'authorKey', type: 'long' }] },
  ],
};

/** Everything open to a guest (the tests are about the rules, not permissions). */
export const LIBRARY_ROLES = {
  privileges: [],
  roles: [],
  permissions: { allowed: [{ applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['guest'], update: ['guest'], drop: ['guest'], execute: ['guest'] }] },
  restrictedByDefault: false,
  forceLogin: false,
};

/** What the chapters' drop events record, in order: `validateDrop:<title>`, `dropping:<title>`, `afterDrop:<title>:<status>`. */
export function chapterEvents(): string[] {
  return ((globalThis as { __libraryEvents?: string[] }).__libraryEvents ??= []);
}

export function clearChapterEvents(): void {
  chapterEvents().length = 0;
}

const CLASSES = {
  ChapterEntity: `
import { Entity, type EntityEvent } from 'dataset-rest';
const log = (): string[] => ((globalThis as any).__libraryEvents ??= []);
export default class ChapterEntity extends Entity {
  validateDrop() {
    log().push('validateDrop:' + String(this.get('title')));
    if (this.get('title') === 'keep') return { errCode: 900, message: 'the chapter "keep" is kept', seriousError: true };
    return undefined;
  }
  dropping() { log().push('dropping:' + String(this.get('title'))); }
  afterDrop(e: EntityEvent) { log().push('afterDrop:' + String(this.get('title')) + ':' + String(e.dropStatus)); }
}
`,
  RemovalEntity: `
import { Entity } from 'dataset-rest';
export default class RemovalEntity extends Entity {
  async saving() {
    const author = await (this.getDataClass().ds as any).Author.get(this.get('authorKey'));
    if (author) await author.drop();
  }
}
`,
  Author: `
import { DataClass, exposed, params } from 'dataset-rest';
export default class Author extends DataClass {
  /** drops the author with this key (and, by its rules, its books and their chapters) */
  @exposed
  @params('key: number')
  async retire(key: number): Promise<boolean> {
    const author = await this.get(key);
    if (!author) return false;
    await author.drop();
    return true;
  }

  /** drops the authors whose name begins with the prefix, as a selection */
  @exposed
  @params('prefix: text')
  async retireAll(prefix: string): Promise<boolean> {
    await this.query('name begin :1', prefix).drop();
    return true;
  }
}
`,
};

/**
 * The guarded library: a guest may do anything but drop chapters (the editor privilege may), and
 * sees neither the books titled "hidden …" nor the loans of the borrower "secret" (restrict()).
 */
export const GUARDED_ROLES = {
  privileges: [{ privilege: 'editor', includes: [] }],
  roles: [],
  permissions: {
    allowed: [
      { applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['guest'], update: ['guest'], drop: ['guest'], execute: ['guest'] },
      { applyTo: 'Chapter', type: 'dataclass', drop: ['editor'] },
    ],
  },
  restrictedByDefault: false,
  forceLogin: false,
};

const GUARDED_CLASSES = {
  Book: `
import { DataClass } from 'dataset-rest';
export default class Book extends DataClass {
  restrict() { return this.query('not (title begin :1)', 'hidden'); }
}
`,
  Loan: `
import { DataClass } from 'dataset-rest';
export default class Loan extends DataClass {
  restrict() { return this.query('borrower != :1', 'secret'); }
}
`,
};

/** Writes the library project into `dir` (model.json, roles.json, classes importing 'dataset-rest'); `guarded`: with GUARDED_ROLES and the restrict()s. */
export function writeLibraryProject(dir: string, guarded = false): void {
  writeLiveProject(dir, LIBRARY_MODEL, guarded ? GUARDED_ROLES : LIBRARY_ROLES, guarded ? { ...CLASSES, ...GUARDED_CLASSES } : CLASSES);
}
