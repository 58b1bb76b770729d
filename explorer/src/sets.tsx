// Entity sets of the collection's dataclass: the grid's selection saved as a set
// ($method=entityset), the sets the server keeps for this session (read from $info, so sets made
// elsewhere show too), combined two at a time ($logicOperator + $otherCollection), opened in a
// grid, and released ($method=release).

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf, query, quoted, REST, rest, type Json } from './api';
import type { CollectionContext } from './panels';
import { go } from './routes';

interface SetInfo {
  readonly id: string;
  readonly dataClass: string;
  readonly selectionSize: number;
  readonly sorted: boolean;
  readonly expires: string;
}

interface Info {
  readonly entitySet?: SetInfo[];
  readonly [other: string]: Json | SetInfo[] | undefined;
}

const OPERATORS = [
  { value: 'AND', label: 'AND (in both)' },
  { value: 'OR', label: 'OR (in either)' },
  { value: 'EXCEPT', label: 'EXCEPT (in the first only)' },
  { value: 'INTERSECT', label: 'INTERSECT (do they share one?)' },
];

/** the id at the end of an __ENTITYSET URI */
const idOf = (uri: string) => uri.slice(uri.lastIndexOf('/') + 1);

export function SetsPanel(props: CollectionContext) {
  const { dc } = props;
  const root = useRef<HTMLDivElement>(null);
  const [info, setInfo] = useState<Info | undefined>();
  const [showInfo, setShowInfo] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | undefined>();
  const [first, setFirst] = useState('');
  const [second, setSecond] = useState('');
  const [operator, setOperator] = useState('AND');
  const setUrl = (id: string) => `${REST}/${encodeURIComponent(dc.name)}/$entityset/${encodeURIComponent(id)}`;

  const load = useCallback(async () => {
    try {
      setInfo(await rest<Info>(`${REST}/$info`));
    } catch (e) {
      setMessage({ ok: false, text: `$info: ${messageOf(e)}` });
    }
  }, []);

  // read when the panel's <details> opens (and each time again): nothing is asked of a closed panel
  useEffect(() => {
    const details = root.current?.closest('details');
    if (!details) {
      void load();
      return;
    }
    const onToggle = () => details.open && void load();
    details.addEventListener('toggle', onToggle);
    return () => details.removeEventListener('toggle', onToggle);
  }, [load]);

  const sets = (info?.entitySet ?? []).filter((s) => s.dataClass === dc.name);
  const ids = sets.map((s) => s.id);
  // a choice that is gone (released, expired) falls back to a set that is there
  const a = ids.includes(first) ? first : ids[0] ?? '';
  const b = ids.includes(second) ? second : ids[1] ?? ids[0] ?? '';

  const act = async (what: () => Promise<string>) => {
    try {
      setMessage({ ok: true, text: await what() });
    } catch (e) {
      setMessage({ ok: false, text: messageOf(e) });
    }
    await load();
  };

  const save = () => act(async () => {
    const answer = await rest<{ __ENTITYSET: string; __COUNT: number }>(props.base + query({
      $filter: props.filter.trim() === '' ? undefined : quoted(props.filter),
      $orderby: props.orderBy === '' ? undefined : quoted(props.orderBy),
      $method: 'entityset',
      $top: 0,
    }));
    return `Saved set ${idOf(answer.__ENTITYSET)} (${answer.__COUNT} entities).`;
  });

  const combine = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const answer = await rest<Json>(setUrl(a) + query({ $logicOperator: operator, $otherCollection: b, $method: 'entityset', $top: 0 }));
      if (typeof answer === 'boolean') return `${a} ${operator} ${b}: ${answer ? 'yes, they share an entity' : 'no, they share no entity'}.`;
      const set = answer as { __ENTITYSET: string; __COUNT: number };
      return `${operator} made set ${idOf(set.__ENTITYSET)} (${set.__COUNT} entities).`;
    });
  };

  const release = (id: string) => act(async () => {
    await rest(setUrl(id) + query({ $method: 'release' }));
    return `Released set ${id}.`;
  });

  return (
    <div class="panel sets" ref={root}>
      <div class="row">
        <button type="button" class="primary" onClick={save}>Save selection as a set</button>
        <button type="button" onClick={() => void load()}>Refresh the list</button>
        <button type="button" aria-expanded={showInfo} onClick={() => {
          // shown fresh: sets expire and other tabs make new ones
          if (!showInfo) void load();
          setShowInfo(!showInfo);
        }}>{showInfo ? 'Hide $info' : 'Show $info'}</button>
      </div>
      <p class={message?.ok === false ? 'error' : 'ok'} role="status" data-testid="sets-message">{message?.text ?? ''}</p>
      <div class="scroll">
        <table class="values sets-list" data-testid="sets-list">
          <caption>Entity sets of {dc.name} ({sets.length})</caption>
          <thead><tr><th scope="col">id</th><th scope="col">entities</th><th scope="col">sorted</th><th scope="col">expires</th><th scope="col">actions</th></tr></thead>
          <tbody>
            {sets.length === 0 && <tr><td colSpan={5} class="muted">No set of {dc.name} in this session.</td></tr>}
            {sets.map((s) => (
              <tr key={s.id}>
                <td><code>{s.id}</code></td>
                <td>{s.selectionSize}</td>
                <td>{s.sorted ? 'yes' : 'no'}</td>
                <td>{s.expires}</td>
                <td class="row">
                  <button type="button" aria-label={`Open set ${s.id}`} onClick={() => go({ kind: 'set', dc: dc.name, id: s.id })}>Open</button>
                  <button type="button" class="danger" aria-label={`Release set ${s.id}`} onClick={() => void release(s.id)}>Release</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {sets.length > 0 && (
        <form class="row" onSubmit={combine}>
          <label for="set-first">First set</label>
          <select id="set-first" value={a} onChange={(e) => setFirst((e.currentTarget as HTMLSelectElement).value)}>
            {ids.map((id) => <option key={id} value={id}>{id}</option>)}
          </select>
          <label for="set-operator">Operator</label>
          <select id="set-operator" value={operator} onChange={(e) => setOperator((e.currentTarget as HTMLSelectElement).value)}>
            {OPERATORS.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
          </select>
          <label for="set-second">Second set</label>
          <select id="set-second" value={b} onChange={(e) => setSecond((e.currentTarget as HTMLSelectElement).value)}>
            {ids.map((id) => <option key={id} value={id}>{id}</option>)}
          </select>
          <button type="submit">Combine</button>
        </form>
      )}
      {showInfo && info && <pre data-testid="info-json" aria-label="$info">{JSON.stringify(info, null, 2)}</pre>}
    </div>
  );
}
