// The dialog that picks the entity an N→1 relation leads to: the target dataclass's entities,
// searched by its first text attribute (`attr = :1` with `@…@`, so the text is never query
// syntax), the first page of them sorted by it.

import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf, query, quoted, REST, rest, type JsonObject } from './api';
import type { DataClassInfo } from './catalog';

const PAGE = 20;

export interface PickerProps {
  readonly target: DataClassInfo;
  /** the relation's name, for the title */
  readonly relation: string;
  readonly open: boolean;
  readonly onPick: (key: string) => void;
  readonly onClose: () => void;
}

export function labelAttribute(dc: DataClassInfo): string | undefined {
  return dc.attributes.find((a) => a.kind === 'storage' && a.type === 'string')?.name;
}

export function EntityPicker(props: PickerProps) {
  const { target } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState('');
  const [found, setFound] = useState<{ count: number; entities: JsonObject[] } | undefined>();
  const [error, setError] = useState('');
  const attr = labelAttribute(target);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    else if (!props.open && d.open) d.close();
  }, [props.open]);

  // each new text asks again, a moment after the last key (older answers are dropped)
  useEffect(() => {
    if (!props.open) return;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      const search = text.trim();
      const url = `${REST}/${encodeURIComponent(target.name)}${query({
        $top: PAGE,
        $attributes: attr,
        $filter: search && attr ? quoted(`${attr} = :1`) : undefined,
        $params: search && attr ? JSON.stringify([`@${search}@`]) : undefined,
        $orderby: attr,
      })}`;
      rest<{ __COUNT: number; __ENTITIES: JsonObject[] }>(url, { signal: abort.signal }).then(
        (page) => {
          setFound({ count: page.__COUNT, entities: page.__ENTITIES });
          setError('');
        },
        (e: unknown) => !abort.signal.aborted && setError(messageOf(e)),
      );
    }, 200);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [props.open, text, target.name]);

  const titleId = `pick-${props.relation}-title`;
  return (
    <dialog ref={dialog} class="entity-picker" aria-labelledby={titleId} onClose={() => props.open && props.onClose()}>
      <div class="stack">
        <h2 id={titleId}>Choose the {props.relation} ({target.name})</h2>
        {attr && (
          <label>
            Search {target.name} by {attr}
            <input type="search" value={text} autoFocus onInput={(e) => setText(e.currentTarget.value)} />
          </label>
        )}
        <p class="error" role="alert">{error}</p>
        <p class="muted" aria-live="polite">{found ? `${found.count.toLocaleString('en')} found${found.count > found.entities.length ? `, the first ${found.entities.length} shown` : ''}` : 'Searching…'}</p>
        <ul class="picker-list">
          {found?.entities.map((e) => {
            const key = String(e.__KEY);
            return (
              <li key={key}>
                <button type="button" class="link" onClick={() => props.onPick(key)}>
                  {target.name}({key}){attr && e[attr] !== null && e[attr] !== undefined ? ` ${String(e[attr])}` : ''}
                </button>
              </li>
            );
          })}
        </ul>
        <div class="row">
          <button type="button" onClick={props.onClose}>Cancel</button>
        </div>
      </div>
    </dialog>
  );
}
