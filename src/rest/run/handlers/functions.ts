// Running a call of user code over REST (planned in plan-function.ts): what it runs on, its
// parameters (entities and selections given as parameters are made here), the call under its
// time limit, and the answer — an entity as the entity itself, a selection as a collection (paged,
// projected, stored by $method=entityset), anything else as {"result": …}.

import { DEFAULT_SET_TIMEOUT_S } from '../../../config/limits.js';
import { WIRE } from '../../../config/wire.js';
import { AnswerBudget, checkTouched, classOf, Entity, EntitySelection, readPage, sessionInternals, staleStamp, withAccess } from '../../../datastore/index.js';
import { DatasetError } from '../../../errors/dataset-error.js';
import { invoke } from '../../../functions/call.js';
import type { CallRequest } from '../../../functions/context.js';
import type { Action, FunctionAnswer, FunctionCode, FunctionSubject } from '../../plan/action.js';
import { functionResource } from '../../plan/authorize.js';
import { findEntity, follow, narrow } from '../collections.js';
import { loginName } from '../../scope/quotas.js';
import { applyValues, attachUploads, entityOf } from '../input.js';
import { entityResponse, pageAnswer, setPageAnswer } from '../../present/present.js';
import { jsonText, type RestResponse } from '../../present/response.js';
import { dataClassFor, setsOf, type Scope } from '../../scope/scope.js';

export async function callFunction(scope: Scope, action: Extract<Action, { kind: 'callFunction' }>): Promise<RestResponse> {
  const self = await subjectOf(scope, action.subject);
  const args = await Promise.all(action.args.map((v, i) => param(scope, v, i)));
  const what = action.code.kind === 'class' ? `${action.code.name} of ${action.code.target.label}` : `the project method ${action.code.method.name}`;
  const resource = functionResource(action);
  if (resource.name === LOGIN_FUNCTION) return answer(scope, await login(scope, args, () => call(scope, action.code, what, self, args, resource)), action.answer, what);
  return answer(scope, await call(scope, action.code, what, self, args, resource), action.answer, what);
}

/** The datastore function that logs a session in (4D's): always callable, its failures counted. */
const LOGIN_FUNCTION = 'ds.authentify';

/**
 * A call of authentify: refused while the address or the user name has failed too often. Each
 * attempt is counted before it runs, and taken back when it logs the session in (it set the
 * session's privileges and left it a user — a login again as the same user counts too); one that
 * leaves the session a guest, or does not set its privileges, stays counted as a failure.
 */
async function login(scope: Scope, args: readonly unknown[], run: () => Promise<unknown>): Promise<unknown> {
  const client = scope.request.caller;
  const user = loginName(args);
  await scope.services.logins.attempt(client, user);
  const calls = sessionInternals.privilegesSet(scope.session);
  const result = await run();
  // (a user whose roles give no privilege is logged in all the same: its user name says so)
  const loggedIn = !scope.session.isGuest() || scope.session.userName !== '';
  if (loggedIn && sessionInternals.privilegesSet(scope.session) > calls) await scope.services.logins.succeeded(client, user);
  return result;
}

/** What the code runs on: the datastore, a dataclass, one entity, or a selection (a stored set's members, filtered and sorted). */
async function subjectOf(scope: Scope, subject: FunctionSubject): Promise<object> {
  switch (subject.kind) {
    case 'datastore':
      return scope.ds;
    case 'singleton':
      return subject.instance;
    case 'dataClass':
      return subject.dc.dataClass;
    case 'entity':
      return findEntity(scope, subject.dc, subject.selector);
    case 'selection': {
      const { dc, set, related } = subject;
      const base = related ? ((await follow(scope, related)) as EntitySelection)
        : set === undefined ? dc.selectWhere(null, scope.access) : await setsOf(scope).membersOf(dc, set);
      return narrow(scope, base, subject.narrowing);
    }
    default: {
      const never: never = subject;
      return never;
    }
  }
}

function call(scope: Scope, code: FunctionCode, what: string, self: object, args: unknown[], resource: { name: string; label: string }): Promise<unknown> {
  const common = {
    name: what, args, timeoutMs: scope.functionTimeoutMs, request: scope.request satisfies CallRequest, socketFd: scope.socketFd,
    caller: { access: scope.access, session: scope.session, requestId: scope.request.id }, resource, promote: scope.core.policy.promotes(resource.name),
  };
  if (code.kind === 'class') {
    const fn = (self as Record<string, (...a: unknown[]) => unknown>)[code.name];
    return invoke({ ...common, run: (a) => fn.apply(self, a), params: code.fn.params });
  }
  const run = code.method.definition.run as (target: object, ...a: unknown[]) => unknown;
  return invoke({
    ...common,
    params: code.method.definition.params,
    run: async (a) => {
      const result = await run(self, ...a);
      // 4D's rule: a method answers an object or a collection (an entity or a selection is an object)
      if (result === null || typeof result !== 'object') {
        throw new DatasetError('METHOD_BAD_RESULT', `${what} must return an object or an array; it returned ${result === undefined ? 'nothing' : JSON.stringify(result).slice(0, 60)}`);
      }
      return result;
    },
  });
}

/**
 * A parameter as the function receives it. An entity parameter ({__DATACLASS, __ENTITY: true,
 * __KEY?, values…}) arrives as an entity with the values applied, not saved; a selection parameter
 * ({__DATASET: id, __ENTITIES: true}) as the members of that entity set. Every other value as JSON
 * gives it.
 */
async function param(scope: Scope, v: unknown, index: number): Promise<unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const obj = v as Record<string, unknown>;
  if (obj[WIRE.ENTITIES] === true) {
    const id = obj[WIRE.DATASET];
    if (typeof id !== 'string') throw new DatasetError('INVALID_BODY', `parameter #${index + 1}: a selection parameter gives its entity set id as "${WIRE.DATASET}"`);
    const sets = setsOf(scope);
    const set = await sets.get(id);
    return sets.members(dataClassFor(scope, set.dataClass), set.keys);
  }
  if (obj[WIRE.ENTITY] !== true) return v;
  const name = obj[WIRE.DATACLASS];
  if (typeof name !== 'string') throw new DatasetError('INVALID_BODY', `parameter #${index + 1}: an entity parameter names its dataclass in "${WIRE.DATACLASS}"`);
  const dc = dataClassFor(scope, name);
  const entity = await entityOf(scope, dc, obj[WIRE.KEY]);
  // a stored entity given with the __STAMP it was read at: changed since, it is refused as
  // $method=update refuses it (1263), before the function runs — else the function would save
  // the client's values over a change the client never saw
  const stamp = obj[WIRE.STAMP];
  if (stamp !== undefined && obj[WIRE.KEY] !== undefined) {
    if (!Number.isInteger(stamp)) throw new DatasetError('INVALID_BODY', `parameter #${index + 1}: __STAMP must be a whole number, not ${JSON.stringify(stamp)}`);
    const stale = staleStamp(entity, stamp as number);
    if (stale) throw stale;
  }
  await attachUploads(scope, entity, applyValues(scope, dc, entity, obj, index));
  // a related entity that does not exist is refused before the call, not when the function saves
  await checkTouched(entity);
  return entity;
}

/** The answer of a call, by the kind of value the function returned. */
async function answer(scope: Scope, result: unknown, how: FunctionAnswer, what: string): Promise<RestResponse> {
  if (result instanceof Entity) {
    if (how.collectionOptions) throw new DatasetError('INVALID_OPTION', '$top, $limit, $skip, $orderby, $filter and $method=entityset apply to collections, not to a single entity');
    return entityResponse(scope, result, how.shape);
  }
  if (result instanceof EntitySelection) {
    const selection = withAccess(result, scope.access);
    if (how.selectionRefuses) throw selectionRefusal(how.selectionRefuses, classOf(selection).name);
    if (!how.store) return pageAnswer(scope, classOf(selection), how.paging, how.shape, how.plan, (request, budget) => readPage(scope.core, selection, request(), budget));
    const set = await setsOf(scope).create(selection, how.timeoutS ?? DEFAULT_SET_TIMEOUT_S);
    return setPageAnswer(scope, classOf(selection).model, set, how.paging, how.shape, true);
  }
  const text = sendable({ result: result === undefined ? null : result }, what);
  // (a value user code made: counted against the answer's size as a read is)
  new AnswerBudget(scope.services.maxAnswerBytes).take(text.length, `the result of ${what}`);
  return jsonText(text);
}

/** Options the answer of a selection cannot honour: there is no relation to store, no attribute to compute on. */
function selectionRefusal(what: NonNullable<FunctionAnswer['selectionRefuses']>, dataClass: string): DatasetError {
  if (what === 'subentityset') return new DatasetError('INVALID_OPTION', '$method=subentityset stores the entities of a relation: /rest/{dataClass}({key})/{relation}?$method=subentityset');
  if (what === 'both') return new DatasetError('INVALID_OPTION', '$compute and $distinct are two requests: give one');
  return new DatasetError('INVALID_OPTION', `${what} needs exactly one attribute in the path: /rest/${dataClass}/{attribute}?${what}=…`);
}

/**
 * A result sent as {"result": …} must be plain JSON: an entity or a selection inside it would be
 * sent as {}, and a bigint, a cycle, a throwing getter or toJSON cannot be sent at all. Either is
 * the function's mistake (7019), said plainly rather than a bare 500. Resolves to the JSON text.
 */
function sendable(value: { result: unknown }, what: string): string {
  try {
    const nested = nestedEntity(value.result, 0, new Set());
    if (nested) {
      throw new DatasetError('FUNCTION_FAILED', `${what} returned an ${nested} inside an object or array: return it alone (it is then sent as REST sends it), or plain values read from it`);
    }
    return JSON.stringify(value);
  } catch (e) {
    if (e instanceof DatasetError) throw e;
    const why = e instanceof Error ? e.message : String(e);
    throw new DatasetError('FUNCTION_FAILED', `${what} returned a value that cannot be sent as JSON: ${why}${/BigInt/.test(why) ? ' (return a number or a string)' : ''}`);
  }
}

/** 'entity' or 'entity selection' when one sits inside the value (searched 64 levels deep: JSON.stringify refuses deeper cycles and depths itself). */
function nestedEntity(value: unknown, depth: number, seen: Set<object>): string | undefined {
  if (value === null || typeof value !== 'object' || depth > 64 || seen.has(value)) return undefined;
  if (value instanceof Entity) return depth > 0 ? 'entity' : undefined;
  if (value instanceof EntitySelection) return depth > 0 ? 'entity selection' : undefined;
  seen.add(value);
  for (const v of Object.values(value)) {
    const found = nestedEntity(v, depth + 1, seen);
    if (found) return found;
  }
  return undefined;
}
