// GET /rest/$catalog, /rest/$catalog/$all, /rest/$catalog/{dataClass}: the structure the caller
// sees, in the shapes of the spec ("Catalog") and reference §2.1 (optional flags appear only when
// true; shared singletons in a `singletons` section); and GET /rest/$querypath, the caller's last
// query path. 4D's shape is the default; a client asking for this server's additions with
// `Prefer: extensions` (RFC 7240) also gets what its session may do and call, what it may not
// read, and the model's labels (the Data Explorer does: docs/decisions.md, "The catalog's shape").

import { WIRE } from '../../../config/wire.js';
import { type DataClassCore, sessionMay } from '../../../datastore/index.js';
import { dataClassMethods, datastoreMethods, singletonEntries } from '../../../functions/catalog.js';
import { attributeType, isExposed, pageSize, type AttributeModel } from '../../../model/types.js';
import type { Action } from '../../plan/action.js';
import { REST_PREFIX } from '../../request/constants.js';
import { json, type RestResponse } from '../../present/response.js';
import { visibleDataClasses, type Scope } from '../../scope/scope.js';

type Json = Record<string, unknown>;

export function catalog(scope: Scope, action: Extract<Action, { kind: 'catalog' }>): RestResponse {
  const dataClasses = visibleDataClasses(scope);
  // shared singletons with exposed functions, before the dataclasses as 4D lists them (none: no section)
  const singletons = singletonEntries(scope.ds);
  const out: Json = {
    ...(singletons.length > 0 ? { singletons } : {}),
    dataClasses: action.all
      ? dataClasses.map((dc) => describeDataClass(scope, scope.core.classOf(dc), false))
      : dataClasses.map((dc) => ({ name: dc.name, uri: `${REST_PREFIX}/$catalog/${dc.name}`, dataURI: `${REST_PREFIX}/${dc.name}` })),
  };
  // the datastore class's exposed functions, as a top-level `methods` array when there are some
  const methods = datastoreMethods(scope.ds);
  if (methods.length > 0) out.methods = methods;
  if (wantsExtensions(scope)) {
    const grants = scope.access.grants;
    out.sessionMay = {
      methods: methods.filter((m) => grants.execute(`ds.${m.name}`)).map((m) => m.name),
      singletons: Object.fromEntries(singletons.map((s) => [s.name, s.methods.filter((m) => grants.execute(`${s.name}.${m.name}`)).map((m) => m.name)])),
    };
  }
  return json(out);
}

/** The preference that asks for this server's additions to 4D's catalog (RFC 7240: a client that does not send it gets 4D's shape). */
export const EXTENSIONS_PREFERENCE = 'extensions';

/**
 * The request says `Prefer: extensions` (among other preferences, in any of its Prefer headers):
 * the token alone, or `extensions=true` — not `extensions=false`, nor the word inside another
 * preference's quoted value (RFC 7240: `preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )`).
 */
function wantsExtensions(scope: Scope): boolean {
  const header = scope.request.headers.prefer;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text === undefined) return false;
  // (quoted strings removed first: a comma or the word inside one is no preference)
  return text.replace(/"(?:[^"\\]|\\.)*"/g, '""').split(',').some((p) => {
    const [name, value] = p.split(';')[0].split('=').map((t) => t.trim().toLowerCase());
    return name === EXTENSIONS_PREFERENCE && (value === undefined || value === 'true');
  });
}

export function catalogDataClass(scope: Scope, action: Extract<Action, { kind: 'catalogDataClass' }>): RestResponse {
  return json(describeDataClass(scope, action.dc, true));
}

/** GET /rest/$querypath: the last path recorded for the caller's session. */
export async function lastQueryPath(scope: Scope): Promise<RestResponse> {
  return json({ [WIRE.QUERY_PATH]: (await scope.core.queryPaths.last(scope.session)) ?? { steps: [] } });
}

/** `single`: the one-dataclass answer, which always states defaultTopSize (spec "Catalog dataclass description"). */
function describeDataClass(scope: Scope, core: DataClassCore, single: boolean): Json {
  const dc = core.model;
  const out: Json = {
    name: dc.name,
    className: dc.className,
    collectionName: dc.collectionName,
    tableNumber: dc.tableNumber,
    scope: 'public',
    dataURI: `${REST_PREFIX}/${dc.name}`,
  };
  if (single || dc.defaultTopSize !== undefined) out.defaultTopSize = pageSize(dc);
  out.extraProperties = dc.extraProperties;
  out.attributes = dc.attributes.filter(scope.visible).map((a) => describeAttribute(scope, core, a));
  out.key = [{ name: dc.key.name }];
  const methods = dataClassMethods(core.dataClass);
  if (methods.length > 0) out.methods = methods;
  if (wantsExtensions(scope)) {
    // not 4D's, asked for: what this session may do here, so a client (the Data Explorer) offers
    // only that, and marks what it may not read rather than asking for a login
    const grants = scope.access.grants;
    // (named only when this session reads it: else its name is in `restricted`, or nowhere — an alias
    // through a dataclass that is not exposed)
    const label = dc.label === undefined ? undefined : dc.attributes.find((a) => a.name === dc.label);
    if (label && scope.visible(label)) out.label = label.name;
    out.sessionMay = {
      read: grants.dataClass(dc.name, 'read'),
      ...sessionMay(grants, dc),
      methods: methods.filter((m) => grants.execute(`${dc.name}.${m.name}`)).map((m) => m.name),
      // exposed attributes this session may not read: named, so a client can say a login may show them
      restricted: dc.attributes.filter((a) => isExposed(a) && !scope.visible(a)).map((a) => a.name),
    };
  }
  return out;
}

function describeAttribute(scope: Scope, core: DataClassCore, a: AttributeModel): Json {
  const out: Json = { name: a.name, kind: a.kind };
  if (a.fieldPos > 0) out.fieldPos = a.fieldPos;
  out.scope = 'public';
  if (a.kind === 'storage' && a.indexed) out.indexed = true;
  out.type = attributeType(a);
  switch (a.kind) {
    case 'storage':
      if (a.identifying) out.identifying = true;
      if (a.dateOnly) out.simpleDate = true;
      // change tracking's attributes: kept by the server
      if (a.serverSet) out.readOnly = true;
      break;
    case 'relatedEntity':
      if (scope.visible(a.foreignKey)) out.foreignKey = a.foreignKey.name;
      if (a.inverse && scope.visible(a.inverse)) out.inverseName = a.inverse.name;
      out.path = a.target.name;
      break;
    case 'relatedEntities':
      out.inverseName = a.inverse.name;
      out.reversePath = true;
      out.path = a.inverse.name;
      // not 4D's catalog (its delete control is in the structure): shown when it is not the default, leave
      if (a.deleteRule !== 'leave') out.deleteRule = a.deleteRule;
      break;
    case 'alias':
      out.path = a.path;
      out.readOnly = true;
      break;
    case 'calculated':
      // writable only with a set function
      if (!core.calculated(a.name)?.set) out.readOnly = true;
      break;
    default: {
      const never: never = a;
      return never;
    }
  }
  if (a.defaultFormat) out.defaultFormat = a.defaultFormat;
  if (a.multiLine) out.multiLine = true;
  if (a.extraProperties) out.extraProperties = a.extraProperties;
  return out;
}
