// The query box: the text is the server's query language, sent as $filter. Before the grid uses
// a new text, one $top=0 request checks it (and brings the plan and path when asked): a text the
// server refuses is shown with a caret at the offset its message names, and the grid keeps the
// last good one.

import { useRef, useState } from 'preact/hooks';
import { query, quoted, rest, RestError, messageOf, type Json } from './api';

export interface FilterBarProps {
  readonly base: string;
  /** an example that fits the dataclass shown (catalog.ts exampleQuery) */
  readonly placeholder: string;
  readonly onApply: (filter: string) => void;
}

interface Refusal {
  readonly message: string;
  readonly offset?: number;
  readonly text: string;
}

/** the offset the server's message names: "… at offset 12 …" */
export function offsetIn(message: string): number | undefined {
  const m = /at offset (\d+)/.exec(message);
  return m ? Number(m[1]) : undefined;
}

export function FilterBar(props: FilterBarProps) {
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');
  const [refusal, setRefusal] = useState<Refusal | undefined>();
  const [withPlan, setWithPlan] = useState(false);
  const [plan, setPlan] = useState<{ plan: Json; path: Json } | undefined>();
  const [busy, setBusy] = useState(false);

  const apply = async (event: Event) => {
    event.preventDefault();
    const filter = text.trim();
    setBusy(true);
    try {
      if (filter !== '' || withPlan) {
        const answer = await rest<{ __queryPlan?: Json; __queryPath?: Json }>(props.base + query({
          $filter: filter === '' ? undefined : quoted(filter),
          $top: 0,
          $queryplan: withPlan ? 'true' : undefined,
          $querypath: withPlan ? 'true' : undefined,
        }));
        setPlan(withPlan ? { plan: answer.__queryPlan ?? null, path: answer.__queryPath ?? null } : undefined);
      } else setPlan(undefined);
      setRefusal(undefined);
      props.onApply(filter);
    } catch (error) {
      const message = messageOf(error);
      const offset = error instanceof RestError ? offsetIn(message) : undefined;
      setRefusal({ message, offset, text: filter });
      setPlan(undefined);
      if (offset !== undefined && input.current) {
        input.current.focus();
        input.current.setSelectionRange(offset, Math.min(offset + 1, filter.length));
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="filter" role="search" onSubmit={apply}>
      <label for="query">Query</label>
      <input
        id="query"
        ref={input}
        value={text}
        onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
        placeholder={props.placeholder}
        spellcheck={false}
        autocomplete="off"
        aria-invalid={refusal ? 'true' : undefined}
        aria-describedby={refusal ? 'query-error' : undefined}
      />
      <button type="submit" class="primary" disabled={busy}>Apply</button>
      <label class="check"><input type="checkbox" checked={withPlan} onChange={(e) => setWithPlan((e.currentTarget as HTMLInputElement).checked)} /> plan and path</label>
      {refusal && (
        <div id="query-error" class="query-error" role="alert">
          {refusal.offset !== undefined && (
            <pre class="caret" aria-hidden="true">{refusal.text}{'\n'}{' '.repeat(refusal.offset)}^</pre>
          )}
          <p class="error">{refusal.message}</p>
        </div>
      )}
      {plan && (
        <div class="plan">
          <h3>Query plan</h3>
          <pre data-testid="query-plan">{JSON.stringify(plan.plan, null, 2)}</pre>
          <h3>Query path</h3>
          <pre data-testid="query-path">{JSON.stringify(plan.path, null, 2)}</pre>
        </div>
      )}
    </form>
  );
}
