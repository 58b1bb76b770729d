// What the administration's views share: a form in a native <dialog> (focus kept inside, Escape
// closes), a confirmation whose first focus is the safe choice, checkboxes for roles and
// privileges, times in tables.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { when } from './admin-api';

/** A modal <dialog> shown while `open`; Escape or the close of the dialog calls onClose. */
export function ModalDialog(props: { open: boolean; id: string; title: string; alert?: boolean; onClose: () => void; children: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    else if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} role={props.alert ? 'alertdialog' : undefined} aria-labelledby={`${props.id}-title`} aria-describedby={props.alert ? `${props.id}-text` : undefined} onClose={() => props.open && props.onClose()}>
      {props.open && (
        <div class="stack">
          <h2 id={`${props.id}-title`}>{props.title}</h2>
          {props.children}
        </div>
      )}
    </dialog>
  );
}

/** Are you sure? Cancel first (the dialog's first focus), the action's button in red. */
export function ConfirmDialog(props: { open: boolean; id: string; title: string; text: string; action: string; busy: boolean; error: string; onConfirm: () => void; onCancel: () => void }) {
  return (
    <ModalDialog open={props.open} id={props.id} title={props.title} alert onClose={props.onCancel}>
      <p id={`${props.id}-text`}>{props.text}</p>
      <p class="error" role="alert">{props.error}</p>
      <div class="row">
        <button type="button" onClick={props.onCancel}>Cancel</button>
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>{props.action}</button>
      </div>
    </ModalDialog>
  );
}

/** Checkboxes for a list of names (roles, privileges), in a fieldset with its legend. */
export function NameChecks(props: { legend: string; names: readonly string[]; checked: readonly string[]; onChange: (checked: string[]) => void; empty: string; hint?: string; name: string }) {
  const lower = new Set(props.checked.map((n) => n.toLowerCase()));
  return (
    <fieldset class="checks">
      <legend>{props.legend}</legend>
      {props.hint && <p class="muted hint">{props.hint}</p>}
      {props.names.length === 0 && <p class="muted">{props.empty}</p>}
      {props.names.map((n) => (
        <label class="check" key={n}>
          <input type="checkbox" name={props.name} value={n} checked={lower.has(n.toLowerCase())} onChange={(e) => {
            const on = (e.currentTarget as HTMLInputElement).checked;
            props.onChange(on ? [...props.checked.filter((c) => c.toLowerCase() !== n.toLowerCase()), n] : props.checked.filter((c) => c.toLowerCase() !== n.toLowerCase()));
          }} />
          {n}
        </label>
      ))}
    </fieldset>
  );
}

/** A time in a table cell: short, the ISO text in a <time>; `none` when there is none. */
export function Time(props: { iso: string | null; none?: string }) {
  if (!props.iso) return <span class="muted">{props.none ?? ''}</span>;
  return <time dateTime={props.iso} title={props.iso}>{when(props.iso)}</time>;
}
