// The entity grid: AG Grid's infinite row model over REST pages. The grid asks for blocks of rows
// as the person scrolls; each block is one GET with $skip, $top, $attributes, $filter and
// $orderby, so a million entities never leave the database more than a page at a time.
// A dataclass that tracks its changes is followed live (live.ts): a row changed elsewhere is
// updated where it is, a row dropped or gone from the query is taken out (the rows in the cache
// are read again), a new one that the query selects comes in the same way.

import { useEffect, useRef } from 'preact/hooks';
import { ColumnApiModule, createGrid, InfiniteRowModelModule, ModuleRegistry, RowApiModule, themeQuartz, TooltipModule, type ColDef, type GridApi, type ICellRendererParams, type IDatasource, type IHeaderParams, type SortModelItem } from 'ag-grid-community';
import { query, quoted, rest, type JsonObject } from './api';
import { isFile, isRelation, isSortable, labelAttribute, typeLabel, type AttributeInfo, type Catalog, type DataClassInfo } from './catalog';
import { follow, type LiveState } from './live';
import { deferredOf, display, formatted } from './values';

// only what the grid uses: rows fetched by blocks, the headers' tooltips, the sort read back, a
// row found by its key (a live update)
ModuleRegistry.registerModules([InfiniteRowModelModule, TooltipModule, ColumnApiModule, RowApiModule]);

/** rows in one REST page */
export const BLOCK = 100;

export interface GridProps {
  readonly catalog: Catalog;
  readonly dc: DataClassInfo;
  /** the collection's URL: `/rest/Company`, `/rest/Company(1)/staff`, `/rest/Company/$entityset/…` */
  readonly base: string;
  readonly columns: readonly string[];
  readonly filter: string;
  /** called with each page's count, or the error that stopped a page */
  readonly onPage: (result: { count: number } | { error: unknown }) => void;
  readonly onOpenEntity: (dc: string, key: string) => void;
  /** the entities a 1→N relation of one entity reaches */
  readonly onOpenList: (dc: string, key: string, attribute: string) => void;
  /** the current sort as $orderby text (for summaries and sets) */
  readonly onSort?: (orderBy: string) => void;
  /** the collection is too large to sort on an attribute without an index (each block would sort it all) */
  readonly large?: boolean;
  /** follow the changes of the collection's query as they are saved (a dataclass that tracks them) */
  readonly live?: boolean;
  /** how the following goes */
  readonly onLive?: (state: LiveState, detail?: string) => void;
}

/** rows changed out of the cache (or gone) read again at most this often… */
const REFRESH_MS = 1000;
/** …and this often for a large collection (each reading counts it again) */
const LARGE_REFRESH_MS = 5000;
const LARGE = 100_000;

const nonce = document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content;

/**
 * The grid's look: the Quartz theme in the page's colours. Rows are 31 px high so that a million
 * of them (31,000,000 px) stay under the 32,000,000 px AG Grid finds a div may be in Chromium:
 * above it the grid "stretches" (scales every row's position on each scroll frame), which costs
 * about 9 ms of layout a frame and took a million 36 px rows under 30 frames a second
 * (test/explorer/explorer-scale.test.ts).
 */
const theme = themeQuartz.withParams({ accentColor: '#1d4ed8', fontSize: 14, headerFontWeight: 600, rowHeight: 31, headerHeight: 44 });

export function Grid(props: GridProps) {
  const host = useRef<HTMLDivElement>(null);
  const api = useRef<GridApi | undefined>(undefined);
  // the latest props, for the callbacks the grid keeps
  const latest = useRef(props);
  latest.current = props;
  // the oldest global stamp of the pages in the cache (what a first `ready` compares with)
  const pages = useRef<PageStamps>({ oldest: Number.POSITIVE_INFINITY, count: 0, reading: 0, applied: new Map() });

  useEffect(() => {
    const grid = createGrid(host.current!, {
      theme,
      styleNonce: nonce,
      rowModelType: 'infinite',
      cacheBlockSize: BLOCK,
      maxBlocksInCache: 40,
      maxConcurrentDatasourceRequests: 2,
      infiniteInitialRowCount: 1,
      blockLoadDebounceMillis: 30,
      columnDefs: columnsFor(props),
      defaultColDef: { resizable: true, sortable: false, minWidth: 90 },
      getRowId: (p) => rowId(p.data as JsonObject),
      datasource: datasource(latest, pages.current),
      onSortChanged: (e) => latest.current.onSort?.(orderBy(e.api.getColumnState().filter((c) => c.sort).map((c) => ({ colId: c.colId, sort: c.sort! })))),
      onCellKeyDown: (e) => {
        const key = (e.event as KeyboardEvent | undefined)?.key;
        if (key === 'Enter' && e.data && 'colDef' in e && e.colDef.field === '__KEY') latest.current.onOpenEntity(latest.current.dc.name, String((e.data as JsonObject).__KEY));
      },
      suppressCellFocus: false,
      // every column is in the page (a dataclass has tens, not thousands): found by a screen reader's
      // table navigation and by Ctrl+F, and scrolling sideways draws nothing new
      suppressColumnVirtualisation: true,
      ensureDomOrder: true,
      overlayNoRowsTemplate: 'No entity matches.',
    });
    api.current = grid;
    return () => {
      grid.destroy();
      api.current = undefined;
    };
  }, [props.base, props.dc.name]);

  // new columns or a new filter: the same grid asks for its rows again
  const columnsKey = props.columns.join(',');
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const grid = api.current;
    if (!grid) return;
    grid.setGridOption('columnDefs', columnsFor(latest.current));
    pages.current.oldest = Number.POSITIVE_INFINITY;
    grid.setGridOption('datasource', datasource(latest, pages.current));
  }, [columnsKey, props.filter]);

  // live: the watch of the same query (same $filter and $attributes; the order does not matter)
  useEffect(() => {
    if (!props.live) return;
    const grid = api.current;
    if (!grid) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    /** the cached blocks read again (their rows, and the count), soon: several changes, one reading */
    const refresh = (soon = false) => {
      if (timer !== undefined) return;
      const wait = soon ? 50 : Math.max(50, last + (pages.current.count > LARGE ? LARGE_REFRESH_MS : REFRESH_MS) - Date.now());
      timer = setTimeout(() => {
        timer = undefined;
        last = Date.now();
        pages.current.oldest = Number.POSITIVE_INFINITY;
        if (!grid.isDestroyed()) grid.refreshInfiniteCache();
      }, wait);
    };
    const stop = follow(readUrl(latest.current), {
      onEntity(entity) {
        const node = grid.getRowNode(String(entity.__KEY));
        // a row in the cache: updated where it is (then put in its place, if the sort's values
        // changed); any other may be new to the query
        if (node?.data) {
          const before = node.data as JsonObject;
          const moved = grid.getColumnState().some((c) => c.sort && before[c.colId] !== entity[c.colId]);
          node.setData(entity);
          if (moved) refresh();
        } else refresh();
        // (a block being read may bring this row as it was before: the page gives way to it)
        if (pages.current.reading > 0) {
          const key = String(entity.__KEY);
          const known = pages.current.applied.get(key);
          if (!known || !(stampOf(known) > stampOf(entity))) pages.current.applied.set(key, entity);
        }
      },
      onRemove(key) {
        pages.current.applied.delete(key);
        // (a key the grid never had is no news)
        if (grid.getRowNode(key)?.data) refresh();
      },
      onReady(stamp, again) {
        if (again || pages.current.oldest < stamp) refresh(true);
        // no page yet (the first is being read): it is compared with this stamp when it comes
        else if (pages.current.oldest === Number.POSITIVE_INFINITY) pages.current.ready = stamp;
      },
      onState: (state, detail) => latest.current.onLive?.(state, detail),
    });
    pages.current.stale = () => refresh(true);
    return () => {
      stop();
      clearTimeout(timer);
      pages.current.stale = undefined;
      pages.current.ready = undefined;
    };
  }, [props.live, props.base, props.dc.name, columnsKey, props.filter]);

  // once a collection proves large, its unindexed headers stop offering a sort
  useEffect(() => {
    if (props.large) api.current?.setGridOption('columnDefs', columnsFor(latest.current));
  }, [props.large]);

  return <div ref={host} class="grid" role="region" aria-label={`${props.dc.name} entities`} />;
}

interface PageStamps {
  oldest: number;
  /** the collection's count, as the last page said */
  count: number;
  /** block reads in flight */
  reading: number;
  /** the entities the watch applied while a block was read (key → entity), since the oldest read began */
  applied: Map<string, JsonObject>;
  /** the stamp of a stream ready before any page came: the first page after it, read before it (or not knowing), refreshes */
  ready?: number;
  /** reads the cached blocks again, soon (set while the grid is followed) */
  stale?: () => void;
}

const stampOf = (e: JsonObject | undefined): number => (typeof e?.__STAMP === 'number' ? e.__STAMP : Number.NaN);

/**
 * The attributes a page asks for: the columns, an N→1 relation's as its target's label
 * (`employer.name`: the related entity inline, its key and label), and the dataclass's own label
 * where a UUID key is shown by it.
 */
export function attributesFor(props: Pick<GridProps, 'catalog' | 'dc' | 'columns'>): string[] {
  const { catalog, dc, columns } = props;
  const out = columns.map((name) => {
    const a = dc.attributes.find((x) => x.name === name);
    const target = a?.kind === 'relatedEntity' ? catalog.target(a) : undefined;
    const label = target && labelAttribute(target);
    return label ? `${name}.${label.name}` : name;
  });
  const own = keyLabel(dc);
  if (own && !columns.includes(own.name)) out.push(own.name);
  return out;
}

/** The attribute a row's key is shown by: its label, when the key is a UUID (32 hex digits say nothing to a person). */
function keyLabel(dc: DataClassInfo): AttributeInfo | undefined {
  const key = dc.attributes.find((a) => a.name === dc.key[0]?.name);
  return key?.type === 'uuid' ? labelAttribute(dc) : undefined;
}

/** what a page of the grid asks for, but the page: its attributes and filter */
function readOptions(props: GridProps): Record<string, string | undefined> {
  const { columns, filter } = props;
  return {
    // (no column chosen: the key alone, not every attribute)
    $attributes: columns.length > 0 ? attributesFor(props).join(',') : props.dc.key[0]?.name,
    $filter: filter.trim() === '' ? undefined : quoted(filter),
  };
}

/** the read the grid's pages are of (what a watch follows) */
function readUrl(props: GridProps): string {
  return props.base + query(readOptions(props));
}

function datasource(latest: { current: GridProps }, stamps: PageStamps): IDatasource {
  return {
    getRows(params) {
      const { base, onPage } = latest.current;
      const url = base + query({
        $skip: params.startRow,
        $top: params.endRow - params.startRow,
        ...readOptions(latest.current),
        $orderby: params.sortModel.length > 0 ? quoted(orderBy(params.sortModel)) : undefined,
      });
      stamps.reading++;
      const done = () => {
        if (--stamps.reading <= 0) {
          stamps.reading = 0;
          stamps.applied.clear();
        }
      };
      rest<{ __COUNT: number; __ENTITIES: JsonObject[]; __GlobalStamp?: number }>(url).then(
        (page) => {
          if (typeof page.__GlobalStamp === 'number') stamps.oldest = Math.min(stamps.oldest, page.__GlobalStamp);
          stamps.count = page.__COUNT;
          // a row the watch changed while this block was read: the newer of the two
          const rows = stamps.applied.size === 0 ? page.__ENTITIES : page.__ENTITIES.map((e) => {
            const newer = e.__KEY === undefined ? undefined : stamps.applied.get(String(e.__KEY));
            return newer && stampOf(newer) > stampOf(e) ? newer : e;
          });
          done();
          params.successCallback(rows, page.__COUNT);
          onPage({ count: page.__COUNT });
          // the first page after a stream was ready: read before it (or not known), it may have missed a change
          if (stamps.ready !== undefined) {
            const before = !(typeof page.__GlobalStamp === 'number' && page.__GlobalStamp >= stamps.ready);
            stamps.ready = undefined;
            if (before) stamps.stale?.();
          }
        },
        (error: unknown) => {
          done();
          params.failCallback();
          onPage({ error });
        },
      );
    },
  };
}

export function orderBy(sort: readonly Pick<SortModelItem, 'colId' | 'sort'>[]): string {
  return sort.map((s) => `${s.colId} ${s.sort}`).join(',');
}

function columnsFor(props: GridProps): ColDef[] {
  const { dc, catalog } = props;
  const keyColumn: ColDef = {
    field: '__KEY',
    headerName: 'key',
    headerComponentParams: { innerHeaderComponent: TypedHeader, type: 'open' },
    pinned: 'left',
    width: 130,
    sortable: false,
    cellRenderer: (p: ICellRendererParams) => {
      if (!p.data) return loading();
      if ((p.data as JsonObject).__KEY === undefined) return dropped();
      const row = p.data as JsonObject;
      const key = String(row.__KEY);
      const own = keyLabel(dc);
      const label = own ? row[own.name] : undefined;
      // (a UUID shown by the entity's label, the key itself on hover)
      return button(label === undefined || label === null || label === '' ? key : display(own, label), `Open ${dc.name} ${key}`, () => props.onOpenEntity(dc.name, key), `${dc.name}(${key})`);
    },
  };
  const shown = props.columns.map((name) => dc.attributes.find((a) => a.name === name)).filter((a): a is AttributeInfo => a !== undefined);
  return [keyColumn, ...shown.map((a): ColDef => ({
    field: a.name,
    colId: a.name,
    headerName: a.name,
    headerTooltip: `${a.name}: ${typeLabel(a, catalog)}${isSortable(a) && !sortable(props, a) ? ' (no index: not sortable on a collection this large)' : ''}`,
    headerComponentParams: { innerHeaderComponent: TypedHeader, type: typeLabel(a, catalog) },
    sortable: sortable(props, a),
    width: a.type === 'image' ? 110 : a.type === 'object' ? 220 : 160,
    valueGetter: (p) => (p.data as JsonObject | undefined)?.[a.name],
    cellRenderer: (p: ICellRendererParams) => cell(props, a, p),
  }))];
}

function sortable(props: GridProps, a: AttributeInfo): boolean {
  return isSortable(a) && (!props.large || a.indexed === true);
}

function cell(props: GridProps, a: AttributeInfo, p: ICellRendererParams): HTMLElement | string {
  if (!p.data) return '';
  const value = p.value as unknown;
  if (value === null || value === undefined) return '';
  const entityKey = String((p.data as JsonObject).__KEY);
  if (isRelation(a)) {
    const d = deferredOf(value);
    const target = props.catalog.target(a);
    if (a.kind === 'relatedEntity' && target && typeof value === 'object') {
      // inline (`employer.name`: its key and label) or deferred (its key alone)
      const inline = value as JsonObject;
      const key = String(d?.__KEY ?? inline.__KEY ?? '');
      const labelled = labelAttribute(target);
      const label = labelled && !d ? inline[labelled.name] : undefined;
      const shown = label === undefined || label === null || label === '' ? `${target.name}(${key})` : display(labelled, label);
      return button(shown, `Open ${target.name} ${key}`, () => props.onOpenEntity(target.name, key), `${target.name}(${key})`);
    }
    if (!d || !target) return text(display(a, value));
    return button(`${a.name}…`, `List the ${a.name} of ${props.dc.name} ${entityKey}`, () => props.onOpenList(props.dc.name, entityKey, a.name));
  }
  if (isFile(a)) {
    const d = deferredOf(value);
    if (!d) return '';
    if (a.type === 'image') {
      const img = document.createElement('img');
      img.src = d.uri;
      img.alt = `${a.name} of ${props.dc.name} ${entityKey}`;
      img.loading = 'lazy';
      img.className = 'thumb';
      return img;
    }
    const link = document.createElement('a');
    link.href = d.uri;
    link.download = `${props.dc.name}-${entityKey}-${a.name}`;
    link.textContent = 'download';
    link.setAttribute('aria-label', `Download the ${a.name} of ${props.dc.name} ${entityKey}`);
    return link;
  }
  return text(formatted(a, value));
}

/**
 * A value as text. (A string a cell renderer returns is put in as HTML: a stored value such as
 * `<meta http-equiv=refresh …>` would act on every viewer. A text node never does.)
 */
function text(value: string): HTMLElement {
  const span = document.createElement('span');
  span.textContent = value;
  return span;
}

/** `title`: what hovering says (the key, where a label is shown) */
function button(text: string, label: string, onClick: () => void, title?: string): HTMLElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'link';
  b.textContent = text;
  if (title) b.title = title;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

/**
 * A row's id: its key. (An entity set keeps a member dropped since it was made, as 4D does: a row
 * without a key, `{"__STAMP": 0}`, each given an id of its own.)
 */
const droppedIds = new WeakMap<object, string>();
let dropCount = 0;
function rowId(data: JsonObject): string {
  if (data.__KEY !== undefined) return String(data.__KEY);
  let id = droppedIds.get(data);
  if (id === undefined) droppedIds.set(data, (id = `(dropped ${++dropCount})`));
  return id;
}

function dropped(): HTMLElement {
  const s = document.createElement('span');
  s.className = 'muted';
  s.textContent = 'dropped';
  s.title = 'dropped since the set was made: the set keeps its place';
  return s;
}

function loading(): HTMLElement {
  const s = document.createElement('span');
  s.className = 'muted';
  s.textContent = '…';
  return s;
}

/** A header showing the attribute's name and, under it, its type (the grid keeps its sort and menu parts). */
class TypedHeader {
  #gui!: HTMLElement;
  init(params: IHeaderParams & { type: string }): void {
    this.#gui = document.createElement('span');
    this.#gui.className = 'typed-header';
    const name = document.createElement('span');
    name.textContent = params.displayName;
    const type = document.createElement('span');
    type.className = 'type';
    type.textContent = params.type;
    this.#gui.append(name, type);
  }
  getGui(): HTMLElement {
    return this.#gui;
  }
  refresh(): boolean {
    return false;
  }
}
