// CSV export and import of the collection shown, through the server's own REST API: the export is
// the server's ($format=csv, streamed: every entity the query selects, the columns the session may
// read); an import reads a CSV file of the same shape (csv.ts) and creates its entities with
// POST $method=update, a batch at a time — the core's save path, its permissions, events and
// checks, each refused row answered with its error.

import { useState } from 'preact/hooks';
import { announce, messageOf, query, quoted, REST, rest, RestError, type JsonObject } from './api';
import { entitiesOfCsv, importInBatches, type ImportOutcome } from './csv';
import type { CollectionContext } from './panels';

/** entities per POST (well under the server's --max-batch-entities default) */
const BATCH = 200;

/** The export's URL: the collection's, its query and order, as CSV. */
export function exportUrl(ctx: Pick<CollectionContext, 'base' | 'filter' | 'orderBy'>): string {
  return ctx.base + query({
    $format: 'csv',
    $filter: ctx.filter.trim() === '' ? undefined : quoted(ctx.filter),
    $orderby: ctx.orderBy === '' ? undefined : quoted(ctx.orderBy),
  });
}

interface Outcome extends ImportOutcome {
  readonly skipped: string[];
}

const describe = (e: unknown): string => (e instanceof RestError || e instanceof Error ? messageOf(e) : String(e));

export function CsvPanel(props: CollectionContext & { mayCreate: boolean; onImported: () => void }) {
  const { dc } = props;
  const [newKeys, setNewKeys] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const [error, setError] = useState('');
  const href = exportUrl(props);

  const importFile = async (file: File) => {
    setBusy(true);
    setError('');
    setOutcome(undefined);
    try {
      const { entities, skipped, lines } = entitiesOfCsv(dc, await file.text(), newKeys);
      const url = `${REST}/${encodeURIComponent(dc.name)}${query({ $method: 'update' })}`;
      const send = async (batch: JsonObject[]) => (await rest<{ __ENTITIES?: JsonObject[] }>(url, { method: 'POST', body: batch })).__ENTITIES ?? [];
      const done = await importInBatches(entities, lines, BATCH, send, describe);
      setOutcome({ ...done, skipped });
      if (done.created > 0) props.onImported();
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="panel csv stack">
      <p class="row">
        <a class="button" href={href} download={`${dc.name}.csv`} data-testid="csv-export" onClick={() => announce({ method: 'GET', url: new URL(href, location.href).href, headers: {} })}>Export as CSV</a>
        <span class="muted">every entity of the grid{props.filter.trim() === '' ? '' : ` where ${props.filter}`}, the columns this session may read</span>
      </p>
      {/* (values go out as stored, so that an import reads them back: docs/decisions.md, "Export over HTTP") */}
      <p class="muted" data-testid="csv-formulas">Values are written as stored: a spreadsheet reads a cell that starts with = + - or @ as a formula. Open files from others as text, or import them into the spreadsheet without formulas.</p>
      {props.mayCreate && (
        <div class="row">
          <label for="csv-import">Import a CSV file into {dc.name}</label>
          <input id="csv-import" type="file" accept=".csv,text/csv" disabled={busy} onChange={(e) => {
            const input = e.currentTarget as HTMLInputElement;
            const file = input.files?.[0];
            if (file) void importFile(file).finally(() => (input.value = ''));
          }} />
          <label class="check"><input type="checkbox" checked={newKeys} onChange={(e) => setNewKeys((e.currentTarget as HTMLInputElement).checked)} /> new keys (leave out the {dc.key[0]?.name} column)</label>
        </div>
      )}
      {busy && <p class="muted" aria-live="polite">Importing…</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {outcome && (
        <div aria-live="polite" data-testid="csv-import-outcome">
          <p><strong>{outcome.created} created</strong>{outcome.refused > 0 ? `, ${outcome.refused} refused` : ''}{outcome.skipped.length > 0 ? ` (columns not imported: ${outcome.skipped.join(', ')})` : ''}</p>
          {outcome.messages.length > 0 && <ul>{outcome.messages.map((m) => <li key={m} class="error">{m}</li>)}</ul>}
          {outcome.stopped && <p class="error" role="alert">{outcome.stopped}</p>}
        </div>
      )}
    </div>
  );
}
