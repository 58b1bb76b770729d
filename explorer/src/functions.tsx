// Calling exposed functions (README, "Calling them"): the dataclass's own and its selection's,
// the datastore's (/rest/$catalog/{fn}), the singletons' (/rest/$singleton/{Class}/{fn}), and an
// entity's (/rest/{dataClass}({key})/{fn}). Parameters are typed by the person, since JSON has no
// dates and the catalog does not say what a function takes; they go as a JSON array body (POST),
// or as $params on a GET when the function allows GET.

import { useRef, useState } from 'preact/hooks';
import { keyPath, messageOf, query, quoted, REST, rest, RestError, type Json, type JsonObject } from './api';
import type { Catalog, DataClassInfo, MethodInfo } from './catalog';
import type { CollectionContext } from './panels';
import { go } from './routes';

/** entities of a selection result shown by key (the page the server sends may hold more: no $top is
 * sent, since the server refuses one when the function answers a single entity) */
const SHOWN = 10;

type Kind = 'dataClass' | 'entityCollection' | 'entity' | 'datastore' | 'singleton';

interface Target {
  readonly id: string;
  readonly group: string;
  /** what the function runs on, in words */
  readonly hint: string;
  readonly kind: Kind;
  /** the singleton's class */
  readonly owner?: string;
  readonly method: MethodInfo;
}

/** where a call goes: a path, its options, and what to undo afterwards (a set made for it) */
interface Address {
  readonly path: string;
  readonly options: Record<string, string | undefined>;
  readonly cleanup?: () => Promise<unknown>;
}

const PARAM_TYPES = ['string', 'number', 'boolean', 'date', 'json', 'null'] as const;
type ParamType = (typeof PARAM_TYPES)[number];
const TYPE_LABELS: Record<ParamType, string> = { string: 'string', number: 'number', boolean: 'boolean', date: 'date', json: 'object / array (JSON)', null: 'null' };

interface Param {
  readonly id: number;
  readonly type: ParamType;
  readonly text: string;
}

/** A parameter row as the value sent; throws an Error naming the row. */
export function paramValue(p: Param, index: number): Json {
  const t = p.text.trim();
  const name = `parameter ${index + 1}`;
  switch (p.type) {
    case 'string': return p.text;
    case 'number': {
      const n = Number(t);
      if (t === '' || !Number.isFinite(n)) throw new Error(`${name}: "${t}" is not a number`);
      return n;
    }
    case 'boolean': return t === 'true';
    // ISO 8601, as the server takes a date (a function declaring 'date' gets a Date)
    case 'date':
      if (!/^\d{4}-\d{2}-\d{2}/.test(t)) throw new Error(`${name}: give a date`);
      return t;
    case 'json':
      try {
        return JSON.parse(t) as Json;
      } catch (e) {
        throw new Error(`${name}: not JSON (${(e as Error).message})`);
      }
    case 'null': return null;
  }
}

const filterOptions = (filter: string, orderBy: string) => ({
  $filter: filter.trim() === '' ? undefined : quoted(filter),
  $orderby: orderBy === '' ? undefined : quoted(orderBy),
});

export function FunctionsPanel(props: CollectionContext) {
  const { catalog, dc } = props;
  const where = props.filter.trim() === '' ? '' : ` where ${props.filter}`;
  const targets: Target[] = [
    ...(dc.methods ?? []).filter((m) => m.applyTo === 'entityCollection').map((m): Target => ({ id: `sel:${m.name}`, group: `${dc.name} selection (the entities of the grid)`, hint: `Runs on the entities of the grid${where}.`, kind: 'entityCollection', method: m })),
    ...(dc.methods ?? []).filter((m) => m.applyTo === 'dataClass').map((m): Target => ({ id: `dc:${m.name}`, group: `${dc.name} dataclass`, hint: `A function of the ${dc.name} dataclass.`, kind: 'dataClass', method: m })),
    ...catalog.methods.map((m): Target => ({ id: `ds:${m.name}`, group: 'Datastore ($catalog)', hint: 'A function of the datastore.', kind: 'datastore', method: m })),
    ...catalog.singletons.flatMap((s) => s.methods.map((m): Target => ({ id: `st:${s.name}:${m.name}`, group: `Singleton ${s.name}`, hint: `A function of the ${s.name} singleton.`, kind: 'singleton', owner: s.name, method: m }))),
  ];
  const resolve = async (t: Target): Promise<Address> => {
    const fn = encodeURIComponent(t.method.name);
    switch (t.kind) {
      case 'datastore': return { path: `${REST}/$catalog/${fn}`, options: {} };
      case 'singleton': return { path: `${REST}/$singleton/${encodeURIComponent(t.owner ?? '')}/${fn}`, options: {} };
      case 'dataClass': return { path: `${REST}/${encodeURIComponent(dc.name)}/${fn}`, options: {} };
      default: return selectionAddress(props, fn);
    }
  };
  return <FunctionCaller idPrefix="fn" targets={targets} resolve={resolve} />;
}

/**
 * An entityCollection function on the grid's selection: a dataclass and a set take $filter and
 * $orderby beside the call; a relation's entities are saved as a set first (released after).
 */
async function selectionAddress(ctx: CollectionContext, fn: string): Promise<Address> {
  const options = filterOptions(ctx.filter, ctx.orderBy);
  const dataClassUrl = `${REST}/${encodeURIComponent(ctx.dc.name)}`;
  if (ctx.base === dataClassUrl) return { path: `${dataClassUrl}/${fn}`, options };
  if (/\/\$entityset\/[^/]+$/.test(ctx.base)) return { path: `${ctx.base}/${fn}`, options };
  const set = await rest<{ __ENTITYSET: string }>(ctx.base + query({ ...options, $method: 'entityset', $top: 0 }));
  return { path: `${set.__ENTITYSET}/${fn}`, options: {}, cleanup: () => rest(set.__ENTITYSET + query({ $method: 'release' })) };
}

export interface EntityFunctionsProps {
  readonly catalog: Catalog;
  readonly dc: DataClassInfo;
  readonly entityKey: string;
}

/** The functions of one entity (applyTo 'entity'): /rest/{dataClass}({key})/{fn}. */
export function EntityFunctionsPanel(props: EntityFunctionsProps) {
  const { dc } = props;
  const targets = (dc.methods ?? []).filter((m) => m.applyTo === 'entity').map((m): Target => ({ id: `e:${m.name}`, group: `${dc.name}(${props.entityKey})`, hint: `Runs on ${dc.name}(${props.entityKey}).`, kind: 'entity', method: m }));
  if (targets.length === 0) return <p class="muted">{dc.name} entities have no exposed function.</p>;
  const resolve = (t: Target): Promise<Address> => Promise.resolve({ path: `${keyPath(dc.name, props.entityKey)}/${encodeURIComponent(t.method.name)}`, options: {} });
  return <FunctionCaller idPrefix="efn" targets={targets} resolve={resolve} />;
}

interface CallerProps {
  /** keeps ids unique when two callers share a page */
  readonly idPrefix: string;
  readonly targets: readonly Target[];
  readonly resolve: (t: Target) => Promise<Address>;
}

/** GET where the function allows it and takes nothing (a plain link could do it); POST otherwise */
function defaultVerb(target: Target | undefined, params: readonly Param[]): 'GET' | 'POST' {
  return target?.method.allowedOnHTTPGET === true && params.length === 0 ? 'GET' : 'POST';
}

type Outcome = { readonly request: string; readonly body?: string; readonly answer?: Json; readonly error?: string };

function FunctionCaller(props: CallerProps) {
  const { idPrefix: p, targets } = props;
  const [chosen, setChosen] = useState(targets[0]?.id ?? '');
  const target = targets.find((t) => t.id === chosen) ?? targets[0];
  const [params, setParams] = useState<Param[]>([]);
  const next = useRef(1);
  const [verb, setVerb] = useState<'GET' | 'POST'>(() => defaultVerb(target, []));
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const getAllowed = target?.method.allowedOnHTTPGET === true;

  if (!target) return <p class="muted">No exposed function.</p>;
  const groups = [...new Set(targets.map((t) => t.group))];
  const update = (id: number, change: Partial<Param>) => setParams((list) => list.map((x) => (x.id === id ? { ...x, ...change } : x)));

  const call = async (e: Event) => {
    e.preventDefault();
    let values: Json[];
    try {
      values = params.map(paramValue);
    } catch (error) {
      setOutcome({ request: '', error: messageOf(error) });
      return;
    }
    const useGet = verb === 'GET' && getAllowed;
    setBusy(true);
    let request = '';
    const body = useGet ? undefined : JSON.stringify(values);
    let address: Address | undefined;
    let result: Outcome;
    try {
      address = await props.resolve(target);
      const url = address.path + query({ ...address.options, $params: useGet && values.length > 0 ? `'${JSON.stringify(values)}'` : undefined });
      request = `${useGet ? 'GET' : 'POST'} ${url}`;
      const answer = await rest<Json>(url, useGet ? {} : { method: 'POST', body: values });
      result = { request, body, answer: answer ?? null };
    } catch (error) {
      const code = error instanceof RestError ? ` (HTTP ${error.status}${error.errCodes.length > 0 ? `, errCode ${error.errCodes.join(', ')}` : ''})` : '';
      result = { request, body, error: messageOf(error) + code };
    }
    // a set made for the call goes before the answer shows: what is on screen is the whole story
    await address?.cleanup?.().catch(() => undefined);
    setOutcome(result);
    setBusy(false);
  };

  return (
    <form class="panel functions" onSubmit={call}>
      <div class="row">
        <label for={`${p}-function`}>Function</label>
        <select id={`${p}-function`} value={target.id} onChange={(e) => {
          const id = (e.currentTarget as HTMLSelectElement).value;
          setChosen(id);
          setVerb(defaultVerb(targets.find((t) => t.id === id), params));
          setOutcome(undefined);
        }}>
          {groups.map((g) => (
            <optgroup key={g} label={g}>
              {targets.filter((t) => t.group === g).map((t) => <option key={t.id} value={t.id}>{t.method.name}{t.method.allowedOnHTTPGET ? ' (GET allowed)' : ''}</option>)}
            </optgroup>
          ))}
        </select>
        <label for={`${p}-verb`}>HTTP method</label>
        <select id={`${p}-verb`} value={verb} onChange={(e) => setVerb((e.currentTarget as HTMLSelectElement).value as 'GET' | 'POST')}>
          <option value="POST">POST</option>
          <option value="GET" disabled={!getAllowed}>GET{getAllowed ? '' : ' (not allowed)'}</option>
        </select>
      </div>
      <p class="muted" data-testid="function-hint">{target.hint}</p>
      <fieldset class="params">
        <legend>Parameters ({params.length})</legend>
        {params.map((x, i) => (
          <div class="param row" key={x.id}>
            <label for={`${p}-type-${x.id}`}>Type of parameter {i + 1}</label>
            <select id={`${p}-type-${x.id}`} value={x.type} onChange={(e) => update(x.id, { type: (e.currentTarget as HTMLSelectElement).value as ParamType })}>
              {PARAM_TYPES.map((t) => <option key={t} value={t}>{TYPE_LABELS[t]}</option>)}
            </select>
            <ValueInput id={`${p}-value-${x.id}`} label={`Value of parameter ${i + 1}`} param={x} onChange={(text) => update(x.id, { text })} />
            <button type="button" aria-label={`Remove parameter ${i + 1}`} onClick={() => setParams((list) => list.filter((y) => y.id !== x.id))}>Remove</button>
          </div>
        ))}
        <button type="button" onClick={() => setParams((list) => [...list, { id: next.current++, type: 'string', text: '' }])}>Add parameter</button>
      </fieldset>
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>Call {target.method.name}</button>
      </div>
      {outcome && <OutcomeView outcome={outcome} />}
    </form>
  );
}

function ValueInput(props: { id: string; label: string; param: Param; onChange: (text: string) => void }) {
  const { id, param } = props;
  const onInput = (e: Event) => props.onChange((e.currentTarget as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement).value);
  const label = <label for={id}>{props.label}</label>;
  switch (param.type) {
    case 'null': return <span class="muted">null</span>;
    case 'boolean':
      return <>{label}<select id={id} value={param.text === 'true' ? 'true' : 'false'} onChange={onInput}><option value="true">true</option><option value="false">false</option></select></>;
    case 'json':
      return <>{label}<textarea id={id} class="json" value={param.text} onInput={onInput} spellcheck={false} placeholder='{"a": 1} or [1, 2]' /></>;
    case 'number':
      return <>{label}<input id={id} type="number" step="any" value={param.text} onInput={onInput} /></>;
    case 'date':
      return <>{label}<input id={id} type="date" value={param.text} onInput={onInput} /></>;
    default:
      return <>{label}<input id={id} type="text" value={param.text} onInput={onInput} /></>;
  }
}

function OutcomeView(props: { outcome: Outcome }) {
  const { request, body, answer, error } = props.outcome;
  return (
    <div class="outcome" aria-live="polite">
      {request && <p class="muted"><code data-testid="function-request">{request}</code>{body !== undefined && <> with the body <code data-testid="function-body">{body}</code></>}</p>}
      {error !== undefined && <p class="error" role="alert" data-testid="function-error">{error}</p>}
      {answer !== undefined && <AnswerSummary answer={answer} />}
      {answer !== undefined && <pre data-testid="function-result" aria-label="Result">{JSON.stringify(answer, null, 2)}</pre>}
    </div>
  );
}

/** what an answer is: a selection (a collection page), an entity, or a plain {result} */
function AnswerSummary(props: { answer: Json }) {
  const a = props.answer;
  if (a === null || typeof a !== 'object' || Array.isArray(a)) return null;
  const model = typeof a.__entityModel === 'string' ? a.__entityModel : '';
  if (Array.isArray(a.__ENTITIES)) {
    const keys = (a.__ENTITIES as JsonObject[]).slice(0, SHOWN).map((x) => String(x.__KEY));
    return (
      <div data-testid="function-selection">
        <p><strong>An entity selection of {model}: {String(a.__COUNT)} {a.__COUNT === 1 ? 'entity' : 'entities'}</strong>{keys.length > 0 ? `; the first ${keys.length} keys:` : ''}</p>
        <ul class="keys">
          {keys.map((k) => <li key={k}><button type="button" class="link" aria-label={`Open ${model} ${k}`} onClick={() => go({ kind: 'entity', dc: model, key: k })}>{k}</button></li>)}
        </ul>
      </div>
    );
  }
  if (model && a.__KEY !== undefined) {
    const key = String(a.__KEY);
    return <p data-testid="function-entity"><strong>An entity: {model}({key})</strong> <button type="button" class="link" onClick={() => go({ kind: 'entity', dc: model, key })}>Open {model} {key}</button></p>;
  }
  return null;
}
