// The $-options as OpenAPI parameters (components.parameters), each once, with the grammar of its
// value in its description. Which operation lists which follows option-rules.ts (the options each
// kind of action reads): an option a kind does not read is not offered on its operation.

import { MAX_TIMEOUT_S, MAX_UPLOAD_TIMEOUT_S, DEFAULT_UPLOAD_TIMEOUT_S, DEFAULT_SET_TIMEOUT_S } from '../../config/limits.js';
import { ERRORS } from '../../errors/registry.js';
import type { Schema } from './schemas.js';

const FILTER_GRAMMAR = `A query in ORDA's language, quoted or not ("…" or '…' around the whole value are removed).

    criterion   := path comparator value | NOT(query) | (query)
    query       := criterion { (AND | & | && | EXCEPT | OR | \\| | \\|\\|) criterion } [ORDER BY path [ASC|DESC] {, path [ASC|DESC]}]
    comparator  := = | == | === | IS | # | != | !== | IS NOT | < | > | <= | >= | IN | % | begin
    value       := 'text' | "text" | unquoted text | number | true | false | null | YYYY-MM-DD | ISO date-time | [list] | :n
    path        := attribute { . attribute } (relations, aliases, object properties, collection[] elements)

- \`=\` and \`==\` take \`@\` as a wildcard (\`smi@\`, \`@son\`); \`===\` and \`IS\` take it literally; \`#\`/\`!=\` never match null.
- \`IN [a, b]\` or \`IN :1\`; \`begin x\`: begins with x; \`% word\`: contains the keyword; \`= null\`, \`# null\`.
- AND and EXCEPT (AND NOT) bind tighter than OR; NOT applies to what follows it.
- Text compares without regard to case or accents. Unquoted text runs to the next AND/OR/EXCEPT/ORDER BY or ')', holds no quote and does not begin with = ! < > # % ~.
- \`:1\`…\`:128\` take their values from $params (never read as query text).
- A mistake answers 400, errCode ${ERRORS.INVALID_FILTER.errCode}, naming the offset.

Example: \`salary > :1 and employer.name = :2 order by lastName\` with \`$params=[5000, "Acme Labs"]\`.`;

const q = (name: string, schema: Schema, description: string, example?: unknown): Schema => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  ...(example === undefined ? {} : { example }),
});

const bool = { type: 'boolean' };

/** components.parameters: key → the parameter ($top's maximum: the server's page size). */
export function parameters(maxPageSize: number): Record<string, Schema> {
  return {
    ...PARAMETERS,
    top: q('$top', { type: 'integer', minimum: 0, maximum: maxPageSize }, `the page size (default: the dataclass's defaultTopSize, else 100; at most ${maxPageSize}, but any number in an export: $format=csv or ndjson)`),
    limit: q('$limit', { type: 'integer', minimum: 0, maximum: maxPageSize }, 'the same as $top (give one of them)'),
  };
}

const PARAMETERS: Record<string, Schema> = {
  filter: q('$filter', { type: 'string' }, FILTER_GRAMMAR),
  params: q('$params', { type: 'string' }, 'A JSON array (single quotes around it allowed): the values of the :1, :2 … placeholders of $filter. On a GET call of a function without $filter, its parameters.', '[5000]'),
  orderby: q('$orderby', { type: 'string' }, 'attribute paths, each optionally followed by asc or desc, separated by commas: `lastName desc, firstName`. Ties are broken by the primary key.'),
  skip: q('$skip', { type: 'integer', minimum: 0 }, 'how many entities to skip before the page (past the end: an empty page)'),
  attributes: q('$attributes', { type: 'string' }, 'the attributes to send, comma-separated paths: `firstName,employer.name`, `staff.*`; relations named this way are sent inline'),
  expand: q('$expand', { type: 'string' }, 'relations, pictures or blobs to send inline rather than __deferred, comma-separated'),
  asArray: q('$asArray', bool, 'a bare array of entities (__KEY in its own type, no __TIMESTAMP; a 1→N relation as {"__COUNT": n})'),
  queryplan: q('$queryplan', bool, 'adds __queryPlan, the plan of $filter'),
  querypath: q('$querypath', bool, 'adds __queryPath, the steps $filter took (also kept for GET /rest/$querypath)'),
  format: q('$format', { type: 'string', enum: ['json', 'looker', 'csv', 'ndjson'] }, "json (4D's shape, the default) or looker (Looker Studio's connector table); on a collection, a relation's entities or an entity set, csv (a header row, RFC 4180) or ndjson (one JSON object a line) streams every entity selected, without a page limit ($top and $skip apply when given; Accept: text/csv asks for csv too)"),
  timeout: q('$timeout', { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_S }, `seconds an entity set lives unused (default ${DEFAULT_SET_TIMEOUT_S})`),
  compute: q('$compute', { type: 'string', enum: ['$all', 'count', 'sum', 'average', 'min', 'max'] }, 'an aggregate of the one attribute in the path: a bare value, or with $all an object {attribute: {count, sum, average, min, max}}'),
  distinct: q('$distinct', bool, 'the sorted distinct values of the one attribute in the path (a JSON array; $top and $skip page it)'),
  logicOperator: q('$logicOperator', { type: 'string', enum: ['AND', 'OR', 'EXCEPT', 'INTERSECT'] }, 'combines the set with $otherCollection (any case)'),
  otherCollection: q('$otherCollection', { type: 'string' }, 'the id of the other entity set of $logicOperator'),
  clean: q('$clean', bool, 'with $method=entityset: a copy of the set without its dropped members'),
  savedfilter: q('$savedfilter', { type: 'string' }, 'the $filter the set was made with: it is made again if it expired or was released'),
  savedorderby: q('$savedorderby', { type: 'string' }, 'the $orderby the set was made with, for the same purpose'),
  subOrderby: q('$subOrderby', { type: 'string' }, 'the order of a $method=subentityset'),
  atomic: q('$atomic', bool, 'a batch saves all or nothing ($atOnce is the same option)'),
  refresh: q('$refresh', bool, 'answers the entity with the values applied, without saving'),
  imageformat: q('$imageformat', { type: 'string', enum: ['best', 'png', 'jpeg', 'gif', 'tiff'] }, 'converts a picture (best: as stored)'),
  binary: q('$binary', bool, 'send the contents as a download (Content-Disposition: attachment)'),
  version: q('$version', { type: 'string' }, "the content's version, as __deferred.uri gives it (read, never checked: it defeats caches)"),
  lock: q('$lock', bool, "true locks the entity for this session (others cannot save or drop it; it takes the right to update it), false releases the session's lock; answers {\"result\", \"__STATUS\"}"),
  emMethod: q('$emMethod', { type: 'string' }, 'with $method=subentityset (POST): a function of the related selection class to call on these entities'),
  uploadRawPict: q('$rawPict', { type: 'string' }, 'true (or the MIME type) when the body is an image'),
  uploadBinary: q('$binary', bool, 'true when the body is any other file'),
  uploadTimeout: q('$timeout', { type: 'integer', minimum: 1, maximum: MAX_UPLOAD_TIMEOUT_S }, `seconds the upload waits to be attached to an entity (default ${DEFAULT_UPLOAD_TIMEOUT_S})`),
};

/** A reference to a component parameter. */
export const param = (key: keyof typeof PARAMETERS): Schema => ({ $ref: `#/components/parameters/${key}` });

/** `$method` with the values one operation takes. */
export function methodParam(values: readonly string[], required: boolean, description: string): Schema {
  return { name: '$method', in: 'query', required, description, schema: { type: 'string', enum: [...values] }, ...(required ? { example: values[0] } : {}) };
}

/** The options of a page of entities (option-rules.ts: readCollection). */
export const PAGE = ['filter', 'params', 'orderby', 'top', 'limit', 'skip', 'attributes', 'expand', 'asArray', 'queryplan', 'querypath', 'format'] as const;
/** The options that shape one entity (readEntity). */
export const SHAPE = ['attributes', 'expand', 'asArray'] as const;
