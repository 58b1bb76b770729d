// Which $-options each kind of action reads, and which it refuses, in one exhaustive table. The
// planner reads a kind's options only through optionsFor(): an option the rule does not list is
// as if not given (a kind can only act on what its rule names), and a combination the rule
// refuses answers INVALID_OPTION before any data is read. Refusals that depend on more than the
// options (the attribute a URL names, what a function returns) stay with the planner.

import { DatasetError } from '../../errors/dataset-error.js';
import type { ActionKind } from './action.js';
import type { OptionName } from '../request/constants.js';
import { pick, type RestOptions } from '../request/options.js';

export interface OptionRule {
  /** the options the kind reads */
  readonly uses: readonly OptionName[];
  /** why the given options do not go together here, if they do not */
  readonly refuses?: (o: RestOptions) => string | undefined;
}

const SHAPE: OptionName[] = ['$attributes', '$expand', '$asArray'];
const PAGING: OptionName[] = ['$top', '$limit', '$skip'];
const NARROWING: OptionName[] = ['$filter', '$params', '$orderby'];
const SET: OptionName[] = ['$logicOperator', '$operator', '$otherCollection', '$clean', '$savedfilter', '$savedorderby'];

/** One entity is answered: the options of a collection would mean nothing. */
function collectionOptions(o: RestOptions): string | undefined {
  if (o.top !== undefined || o.skip > 0 || o.orderby !== undefined || o.filter !== undefined || o.method === 'entityset') {
    return '$top, $limit, $skip, $orderby, $filter and $method=entityset apply to collections, not to a single entity';
  }
  return undefined;
}

/** A stream of changes has no page, order, computation or other format: what a read would take is refused, not ignored. */
function watchOptions(o: RestOptions): string | undefined {
  const given = (['$top', '$limit', '$skip', '$orderby', '$compute', '$distinct', '$format', '$asArray', '$queryplan', '$querypath', '$timeout'] as const).filter((name) => o.given.has(name));
  return given.length > 0 ? `$method=watch streams each change as one entity: ${given.join(', ')} cannot apply (read the selection for a page, then watch it)` : undefined;
}

/** $format=looker answers a table of values (csv and ndjson, an export, too): nothing of 4D's JSON shape goes with it. */
function lookerShape(o: RestOptions): string | undefined {
  if (o.format === 'csv' || o.format === 'ndjson') return exportShape(o);
  if (o.format !== 'looker') return undefined;
  const json: string[] = [];
  if (o.asArray) json.push('$asArray');
  if (o.expand !== undefined) json.push('$expand');
  if (o.queryplan) json.push('$queryplan');
  if (o.querypath) json.push('$querypath');
  if (json.length > 0) return `$format=looker answers a table of the entities' values: ${json.join(', ')} ${json.length === 1 ? 'shapes' : 'shape'} 4D's JSON answer, not that one`;
  if (o.method === 'entityset') return "$format=looker answers a table of the entities' values: $method=entityset answers the new set in JSON; store the set first, then read it with $format=looker";
  return undefined;
}

/** An export ($format=csv or ndjson, or Accept: text/csv) streams the values of every entity selected: no JSON shape, no set stored. */
function exportShape(o: RestOptions): string | undefined {
  const asked = o.given.has('$format') ? `$format=${o.format}` : `an export (Accept: ${o.format === 'csv' ? 'text/csv' : 'application/x-ndjson'})`;
  const json: string[] = [];
  if (o.asArray) json.push('$asArray');
  if (o.expand !== undefined) json.push('$expand');
  if (o.queryplan) json.push('$queryplan');
  if (o.querypath) json.push('$querypath');
  if (json.length > 0) return `${asked} streams the values of every entity selected: ${json.join(', ')} ${json.length === 1 ? 'shapes' : 'shape'} 4D's JSON answer, not that one`;
  if (o.method !== undefined) return `${asked} streams the values of the entities selected: $method=${o.method} goes without it (store a set first, then export /rest/{dataClass}/$entityset/{id})`;
  return undefined;
}

/**
 * $logicOperator and $otherCollection where no stored set is read: refused rather than left
 * unread (the collection alone would answer as if the other set were empty). `request`: what the
 * request does instead.
 */
export function logicWithoutSet(o: RestOptions, dataClass: string, request: string): string | undefined {
  if (!o.logic) return undefined;
  return `$logicOperator and $otherCollection combine one stored entity set with another: /rest/${dataClass}/$entityset/{id}?$logicOperator=${o.logic.operator}&$otherCollection=${o.logic.other.slice(0, 40)}; this request ${request}`;
}

function computeAndDistinct(o: RestOptions): string | undefined {
  return o.compute !== undefined && o.distinct ? '$compute and $distinct are two requests: give one' : undefined;
}

const UPLOAD: OptionName[] = ['$rawPict', '$binary', '$timeout'];

export const OPTION_RULES: Record<ActionKind, OptionRule> = {
  catalog: { uses: [] },
  catalogDataClass: { uses: [] },
  info: { uses: [] },
  openapi: { uses: [] },
  queryPath: { uses: [] },
  readCollection: { uses: [...NARROWING, ...PAGING, ...SHAPE, '$queryplan', '$querypath', '$format'], refuses: lookerShape },
  // (a stream has no page and no order: each event is one entity)
  watch: { uses: ['$filter', '$params', '$attributes', '$expand', '$method'], refuses: watchOptions },
  readEntity: { uses: SHAPE, refuses: collectionOptions },
  readRelation: { uses: SHAPE, refuses: collectionOptions },
  readFile: { uses: ['$imageformat', '$binary', '$version', '$expand'] },
  createSet: { uses: [...NARROWING, ...PAGING, ...SHAPE, '$method', '$timeout', '$subOrderby'] },
  readSet: {
    uses: [...NARROWING, ...PAGING, ...SHAPE, ...SET, '$method', '$timeout', '$subOrderby', '$format'],
    refuses: (o) => (o.clean && o.method !== 'entityset' ? '$clean=true makes a new set: give $method=entityset with it' : lookerShape(o)),
  },
  release: { uses: ['$method', ...SHAPE] },
  releaseSets: { uses: [] },
  update: { uses: ['$method', '$atomic', '$atOnce', '$atonce', '$refresh', ...SHAPE] },
  validate: { uses: ['$method'] },
  delete: { uses: ['$method', '$filter', '$params'] },
  deleteSet: { uses: ['$method'] },
  compute: { uses: [...NARROWING, ...SET, '$compute'], refuses: computeAndDistinct },
  distinct: { uses: [...NARROWING, ...SET, ...PAGING, '$distinct'], refuses: computeAndDistinct },
  callFunction: {
    uses: [...NARROWING, ...PAGING, ...SHAPE, '$method', '$timeout', '$queryplan', '$querypath', '$compute', '$distinct', '$emMethod'],
    refuses: (o) => logicWithoutSet(o, '{dataClass}', 'calls a function, which runs on a set as it is stored (store the combination first, then call the function on it)'),
  },
  directory: { uses: [] },
  admin: { uses: [] },
  // a request of its own: what would make it another request, or a collection's, is refused
  lock: { uses: ['$lock'], refuses: (o) => (o.method !== undefined ? `$lock is a request of its own: give no $method with it (got $method=${o.method})` : collectionOptions(o)) },
  storeFile: { uses: ['$rawPict', '$binary', ...SHAPE] },
  upload: {
    uses: UPLOAD,
    refuses(o) {
      const others = [...o.given].filter((name) => !UPLOAD.includes(name));
      if (others.length > 0) return `$upload takes $rawPict, $binary and $timeout; ${others.join(', ')} ${others.length === 1 ? 'does' : 'do'} not apply`;
      if (o.rawPict && o.binary) return 'an upload is an image ($rawPict=true) or any other file ($binary=true), not both';
      if (!o.rawPict && !o.binary) return 'say what the upload is: $rawPict=true for an image, $binary=true for any other file';
      return undefined;
    },
  },
};

/**
 * $format=looker (csv, ndjson) where the answer is no collection: refused (an answer in another
 * shape than the one asked for would mislead), whatever else the kind ignores. Checked once the
 * kind is known. A format only Accept asked for is a preference: elsewhere, JSON answers.
 */
export function checkFormat(kind: ActionKind, options: RestOptions): void {
  if (options.format === 'json' || !options.given.has('$format') || OPTION_RULES[kind].uses.includes('$format')) return;
  const what = options.format === 'looker' ? 'a page of entities' : 'every entity selected';
  throw new DatasetError('INVALID_OPTION', `$format=${options.format} answers ${what} (GET /rest/{dataClass}, a relation's entities, /rest/{dataClass}/$entityset/{id}); this request is answered in JSON only`);
}

/** The options of a request as `kind` reads them, or INVALID_OPTION for a combination it refuses. */
export function optionsFor(kind: ActionKind, options: RestOptions): RestOptions {
  const rule = OPTION_RULES[kind];
  const refused = rule.refuses?.(options);
  if (refused !== undefined) throw new DatasetError('INVALID_OPTION', refused);
  return pick(options, rule.uses);
}
