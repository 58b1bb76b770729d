// A collection in a grid — a dataclass, the entities a relation reaches, or an entity set — with
// the query box, the column chooser, and the panels that work on the same selection (summaries,
// entity sets, functions). A dataclass that tracks its changes is followed live, with a badge
// that says so (a relation's list is not: the server watches a query, an entity or a set).
// What the session may not read of the dataclass is named, locked, with the login that may show it.

import { useMemo, useState } from 'preact/hooks';
import { askLogin, messageOf } from './api';
import { exampleQuery, isFile, type Catalog, type DataClassInfo } from './catalog';
import { CsvPanel } from './csv-panel';
import { FilterBar } from './filter-bar';
import { FunctionsPanel } from './functions';
import { Grid } from './grid';
import { tracksChanges, type LiveState } from './live';
import { LiveBadge } from './live-badge';
import { Lock } from './lock';
import type { CollectionContext } from './panels';
import { go } from './routes';
import { SetsPanel } from './sets';
import { SummariesPanel } from './summaries';

export interface CollectionViewProps {
  readonly catalog: Catalog;
  readonly dc: DataClassInfo;
  readonly base: string;
  readonly title: string;
  readonly source: 'dataclass' | 'relation' | 'set';
}

/**
 * Past this many entities a header sorts only on an indexed attribute: without an index every
 * block of rows sorts the whole collection again (seconds each at a million).
 */
const UNINDEXED_SORT_LIMIT = 100_000;

/** columns shown at first: every attribute but the key (it has its own column) and blobs, up to 30 */
function defaultColumns(dc: DataClassInfo): string[] {
  const key = dc.key[0]?.name;
  return dc.attributes.filter((a) => a.name !== key && a.type !== 'blob').slice(0, 30).map((a) => a.name);
}

export function CollectionView(props: CollectionViewProps) {
  const { catalog, dc } = props;
  const [columns, setColumns] = useState<string[]>(() => defaultColumns(dc));
  const [filter, setFilter] = useState('');
  const [orderBy, setOrderBy] = useState('');
  const [count, setCount] = useState<number | undefined>();
  const [pageError, setPageError] = useState('');
  const context: CollectionContext = useMemo(() => ({ catalog, dc, base: props.base, filter, orderBy }), [catalog, dc, props.base, filter, orderBy]);
  const mayCreate = dc.sessionMay?.create !== false;
  const live = props.source !== 'relation' && tracksChanges(dc);
  const [liveState, setLiveState] = useState<{ state: LiveState; detail?: string }>({ state: 'connecting' });
  const placeholder = useMemo(() => exampleQuery(dc, catalog), [dc, catalog]);
  const restricted = dc.sessionMay?.restricted ?? [];
  // (a grid read again from the start: after an import)
  const [reload, setReload] = useState(0);

  return (
    <section class="collection" aria-labelledby="collection-title">
      <div class="title-row">
        {props.source !== 'dataclass' && <button type="button" onClick={() => history.back()}>← Back</button>}
        <h2 id="collection-title">{props.title}</h2>
        <span class="count" aria-live="polite" data-testid="entity-count">{count === undefined ? '' : `${count.toLocaleString('en')} ${count === 1 ? 'entity' : 'entities'}`}</span>
        {live && <LiveBadge state={liveState.state} detail={liveState.detail} />}
        {props.source === 'dataclass' && mayCreate && <button type="button" class="primary" onClick={() => go({ kind: 'new', dc: dc.name })}>New {dc.name}</button>}
      </div>
      {restricted.length > 0 && (
        <p class="restricted muted" data-testid="restricted">
          <Lock /> Not shown to this session: {restricted.join(', ')}.{' '}
          <button type="button" class="link" onClick={askLogin}>Log in to see</button>
        </p>
      )}
      <FilterBar base={props.base} placeholder={placeholder} onApply={setFilter} />
      <div class="panels">
        <ColumnChooser catalog={catalog} dc={dc} columns={columns} onChange={setColumns} />
        <details>
          <summary>Summaries</summary>
          <SummariesPanel {...context} />
        </details>
        <details>
          <summary>Entity sets</summary>
          <SetsPanel {...context} />
        </details>
        <details>
          <summary>Functions</summary>
          <FunctionsPanel {...context} />
        </details>
        <details>
          <summary>CSV</summary>
          <CsvPanel {...context} mayCreate={props.source === 'dataclass' && mayCreate} onImported={() => setReload((r) => r + 1)} />
        </details>
      </div>
      {pageError && <p class="error" role="alert">{pageError}</p>}
      <Grid
        key={reload}
        catalog={catalog}
        dc={dc}
        base={props.base}
        columns={columns}
        filter={filter}
        onPage={(r) => {
          if ('count' in r) {
            setCount(r.count);
            setPageError('');
          } else setPageError(messageOf(r.error));
        }}
        onSort={setOrderBy}
        large={count !== undefined && count > UNINDEXED_SORT_LIMIT}
        live={live}
        onLive={(state, detail) => setLiveState({ state, detail })}
        onOpenEntity={(name, key) => go({ kind: 'entity', dc: name, key })}
        onOpenList={(name, key, attribute) => go({ kind: 'list', dc: name, key, attribute })}
      />
    </section>
  );
}

function ColumnChooser(props: { catalog: Catalog; dc: DataClassInfo; columns: string[]; onChange: (c: string[]) => void }) {
  const key = props.dc.key[0]?.name;
  const restricted = props.dc.sessionMay?.restricted ?? [];
  const all = props.dc.attributes.filter((a) => a.name !== key);
  const toggle = (name: string, on: boolean) => {
    // the order of the model, whatever the order of the clicks
    const chosen = new Set(props.columns);
    if (on) chosen.add(name);
    else chosen.delete(name);
    props.onChange(all.filter((a) => chosen.has(a.name)).map((a) => a.name));
  };
  return (
    <details>
      <summary>Columns ({props.columns.length} of {all.length})</summary>
      <fieldset class="columns">
        <legend class="visually-hidden">Columns shown ($attributes)</legend>
        {all.map((a) => (
          <label key={a.name} class="check">
            <input type="checkbox" checked={props.columns.includes(a.name)} onChange={(e) => toggle(a.name, (e.currentTarget as HTMLInputElement).checked)} />
            {a.name} <span class="muted">{isFile(a) ? a.type : a.kind === 'storage' ? a.type : a.kind}</span>
          </label>
        ))}
        {restricted.map((name) => (
          <span key={name} class="check muted" title="log in to see"><Lock /> {name} (log in to see)</span>
        ))}
      </fieldset>
    </details>
  );
}
