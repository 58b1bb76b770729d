// Summaries of one attribute over the selection the grid shows: $compute=$all (count, sum,
// average, min, max: the server answers only those that fit the type) and $distinct=true. Both
// follow the grid's base and filter, and are asked again when either changes, so a summary on
// screen is never of another selection than the grid's.

import { useEffect, useState } from 'preact/hooks';
import { messageOf, query, quoted, rest, type Json } from './api';
import { typeLabel, type AttributeInfo, type Catalog } from './catalog';
import type { CollectionContext } from './panels';
import { display } from './values';

/** distinct values shown at most; one more is asked for, to know whether there are more */
export const DISTINCT_CAP = 100;

const STATS = ['count', 'sum', 'average', 'min', 'max'] as const;

/** values $compute can work on: stored and alias values that are neither objects, files nor entities */
function computable(catalog: Catalog, a: AttributeInfo): boolean {
  if (a.kind !== 'storage' && a.kind !== 'alias') return false;
  if (a.kind === 'alias' && catalog.target(a)) return false;
  return !['object', 'image', 'picture', 'blob'].includes(a.type);
}

/** An attribute's URL over a collection: an entity set puts it before `$entityset` (README). */
export function attributeUrl(base: string, attribute: string): string {
  const set = /^(.*)\/\$entityset\/([^/?]+)$/.exec(base);
  const name = encodeURIComponent(attribute);
  return set ? `${set[1]}/${name}/$entityset/${set[2]}` : `${base}/${name}`;
}

interface Result {
  /** the attribute summarized: the choice may have moved on since */
  readonly name: string;
  /** the filter it was computed under */
  readonly filter: string;
  readonly stats?: Record<string, Json>;
  readonly statsError?: string;
  readonly distinct?: Json[];
  readonly distinctError?: string;
}

export function SummariesPanel(props: CollectionContext) {
  const { catalog, dc } = props;
  const choices = dc.attributes.filter((a) => computable(catalog, a));
  const [chosen, setChosen] = useState(choices[0]?.name ?? '');
  // what is summarized (set by the button): asked again with each new base or filter
  const [asked, setAsked] = useState<{ name: string; n: number } | undefined>();
  const [result, setResult] = useState<Result | undefined>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!asked) return;
    let live = true;
    const url = attributeUrl(props.base, asked.name);
    const filter = props.filter.trim() === '' ? undefined : quoted(props.filter);
    setBusy(true);
    Promise.allSettled([
      rest<Record<string, Record<string, Json>>>(url + query({ $compute: '$all', $filter: filter })),
      rest<Json[]>(url + query({ $distinct: 'true', $filter: filter, $top: DISTINCT_CAP + 1 })),
    ]).then(([stats, distinct]) => {
      if (!live) return;
      setBusy(false);
      setResult({
        name: asked.name,
        filter: props.filter,
        stats: stats.status === 'fulfilled' ? stats.value[asked.name] ?? {} : undefined,
        statsError: stats.status === 'rejected' ? messageOf(stats.reason) : undefined,
        distinct: distinct.status === 'fulfilled' ? distinct.value : undefined,
        distinctError: distinct.status === 'rejected' ? messageOf(distinct.reason) : undefined,
      });
    });
    return () => {
      live = false;
    };
  }, [asked, props.base, props.filter]);

  if (choices.length === 0) return <p class="muted">{dc.name} has no attribute to summarize.</p>;
  const attribute = dc.attributes.find((a) => a.name === result?.name);
  return (
    <div class="panel summaries">
      <form class="row" onSubmit={(e) => {
        e.preventDefault();
        setAsked((a) => ({ name: chosen, n: (a?.n ?? 0) + 1 }));
      }}>
        <label for="summary-attribute">Attribute</label>
        <select id="summary-attribute" value={chosen} onChange={(e) => setChosen((e.currentTarget as HTMLSelectElement).value)}>
          {choices.map((a) => <option key={a.name} value={a.name}>{a.name} ({typeLabel(a, catalog)})</option>)}
        </select>
        <button type="submit" class="primary" disabled={busy}>{busy ? 'Summarizing…' : 'Summarize'}</button>
        <span class="muted">{props.filter.trim() === '' ? 'over every entity of this collection' : `over the entities matching ${props.filter}`}</span>
      </form>
      {result && attribute && <Results attribute={attribute} result={result} />}
    </div>
  );
}

function Results(props: { attribute: AttributeInfo; result: Result }) {
  const { attribute: a, result } = props;
  const more = (result.distinct?.length ?? 0) > DISTINCT_CAP;
  const values = result.distinct?.slice(0, DISTINCT_CAP) ?? [];
  // count, sum and average are numbers whatever the attribute: a date's count is no date
  const shown = (stat: string, v: Json) => (stat === 'count' ? String(v) : stat === 'min' || stat === 'max' || a.type === 'duration' ? display(a, v) : String(v));
  return (
    <div class="summary-results">
      {result.statsError && <p class="error" role="alert">$compute: {result.statsError}</p>}
      {result.stats && (
        <table class="values" data-testid="summary-stats">
          <caption>{a.name}{result.filter.trim() === '' ? '' : ` (where ${result.filter})`}</caption>
          <tbody>
            {STATS.filter((s) => s in result.stats!).map((s) => (
              <tr key={s}><th scope="row">{s}</th><td>{shown(s, result.stats![s])}</td></tr>
            ))}
          </tbody>
        </table>
      )}
      {result.distinctError && <p class="error" role="alert">$distinct: {result.distinctError}</p>}
      {result.distinct && (
        <table class="values distinct" data-testid="summary-distinct">
          <caption>
            Distinct values of {a.name}: {more ? `the first ${DISTINCT_CAP} (there are more)` : values.length}
          </caption>
          <tbody>
            {values.map((v, i) => <tr key={i}><td>{v === null ? <span class="muted">null</span> : display(a, v)}</td></tr>)}
          </tbody>
        </table>
      )}
    </div>
  );
}
