// The dialects there are, by the name a worker thread is told (a Dialect holds functions: it
// cannot be posted to another thread; its name can). The one place that maps a name to a
// dialect: elsewhere code is given the storage's dialect and asks it questions.

import type { Dialect } from './dialect.js';
import { postgresDialect } from './dialect-postgres.js';
import { sqliteDialect } from './dialect-sqlite.js';

const DIALECTS = { sqlite: sqliteDialect, postgres: postgresDialect } as const;

export type DialectName = keyof typeof DIALECTS;

/** Every dialect (for what must hold on each, checked once). */
export const ALL_DIALECTS: readonly Dialect[] = Object.values(DIALECTS);

/** The name another thread finds this dialect by (dialectNamed). */
export function nameOfDialect(d: Dialect): DialectName {
  const name = (Object.keys(DIALECTS) as DialectName[]).find((n) => DIALECTS[n] === d);
  if (name === undefined) throw new Error(`the dialect ${d.name} is not one of sql/dialects.ts`);
  return name;
}

export function dialectNamed(name: DialectName): Dialect {
  return DIALECTS[name];
}
