// The entity view's two interruptions: the conflict box (someone saved the entity since it was
// read) and the confirmation a delete needs.

import { useEffect, useRef } from 'preact/hooks';
import type { JsonObject } from './api';
import type { Catalog, DataClassInfo } from './catalog';
import { describe } from './entity-fields';

export interface Conflict {
  /** the entity as stored now (its new __STAMP) */
  readonly stored: JsonObject;
  /** what this form would change */
  readonly changes: JsonObject;
}

export function ConflictBox(props: { catalog: Catalog; dc: DataClassInfo; conflict: Conflict; busy: boolean; onReload: () => void; onOverwrite: () => void }) {
  const { catalog, dc, conflict } = props;
  const box = useRef<HTMLDivElement>(null);
  // the box is what the person must deal with next: it takes the focus
  useEffect(() => box.current?.focus(), [conflict]);
  return (
    <div ref={box} class="conflict stack" role="alert" tabIndex={-1} aria-labelledby="conflict-title">
      <h3 id="conflict-title">Someone else saved this entity since you opened it</h3>
      <p>Your changes were not saved. Keep the stored values, or save yours over them.</p>
      <table class="values">
        <caption class="visually-hidden">Your values and the stored ones</caption>
        <thead><tr><th scope="col">attribute</th><th scope="col">your value</th><th scope="col">stored value</th></tr></thead>
        <tbody>
          {Object.entries(conflict.changes).map(([name, mine]) => {
            const a = dc.attributes.find((x) => x.name === name);
            if (!a) return null;
            return (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>{describe(catalog, a, mine)}</td>
                <td>{describe(catalog, a, conflict.stored[name])}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div class="row">
        <button type="button" disabled={props.busy} onClick={props.onReload}>Reload</button>
        <button type="button" class="danger" disabled={props.busy} onClick={props.onOverwrite}>Overwrite</button>
      </div>
    </div>
  );
}

export function DeleteDialog(props: { open: boolean; title: string; onConfirm: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    else if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} role="alertdialog" aria-labelledby="delete-title" aria-describedby="delete-text" onClose={() => props.open && props.onCancel()}>
      <div class="stack">
        <h2 id="delete-title">Delete {props.title}?</h2>
        <p id="delete-text">The entity is removed from the datastore. This cannot be undone.</p>
        <div class="row">
          {/* Cancel first: the safe choice takes the dialog's first focus */}
          <button type="button" onClick={props.onCancel}>Cancel</button>
          <button type="button" class="danger" onClick={props.onConfirm}>Delete</button>
        </div>
      </div>
    </dialog>
  );
}
