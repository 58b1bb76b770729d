// One row of the entity form per attribute: its label (for/id), a control that fits its type,
// its type under the name, and the messages about it. A field's state is text (what the control
// holds: a relation's key, "true"/"false"/"" for a bool) so that a half-typed value is kept as
// typed; it becomes a value only when the form is sent (values.ts fromField).

import { useEffect, useState } from 'preact/hooks';
import { keyPath, query, rest, type Json, type JsonObject } from './api';
import { INTEGER_TYPES, isEditable, isFile, labelAttribute, NUMBER_TYPES, typeLabel, type AttributeInfo, type Catalog, type DataClassInfo } from './catalog';
import { EntityPicker } from './entity-picker';
import { hashOf } from './routes';
import { deferredOf, display, formatted, toField } from './values';

/** an upload waiting for the next save, or null: the file removed */
export type FileChange = { readonly id: string; readonly name: string; readonly preview?: string } | null;

export interface FieldProps {
  readonly catalog: Catalog;
  readonly dc: DataClassInfo;
  readonly a: AttributeInfo;
  /** the entity as stored (undefined: a new one) */
  readonly entity: JsonObject | undefined;
  readonly text: string;
  readonly onText: (text: string) => void;
  readonly file: FileChange | undefined;
  readonly onFile: (file: File | null) => void;
  readonly errors: readonly string[];
  readonly readOnly: boolean;
  /** a form-level check of the field's text (invalid JSON), shown before anything is sent */
  readonly onCheck?: () => void;
}

export const fieldId = (name: string) => `ef-${name}`;

/** the text a field starts with */
export function initialText(a: AttributeInfo, entity: JsonObject | undefined): string {
  const value = entity?.[a.name];
  if (a.kind === 'relatedEntity') return deferredOf(value)?.__KEY ?? '';
  if (a.type === 'bool') return value === true ? 'true' : value === false ? 'false' : '';
  return toField(a, value);
}

/** the entity's name as the explorer writes it: Company(1) */
export const entityName = (dc: string, key: string) => `${dc}(${key})`;

export function FieldRow(props: FieldProps) {
  const { a, catalog } = props;
  const id = fieldId(a.name);
  const editable = !props.readOnly && isEditable(props.dc, a);
  const describedBy = [`${id}-type`, props.errors.length > 0 ? `${id}-error` : ''].filter(Boolean).join(' ');
  // a control of its own has a <label for>; a shown value is a group named by its label
  const labelled = editable;
  // the type beside the label, not in it: the control's name is the attribute's name alone
  return (
    <>
      <div class="label">
        {labelled ? <label for={id}>{a.name}</label> : <span id={`${id}-label`}>{a.name}</span>}
        <span class="hint" id={`${id}-type`}>{typeLabel(a, catalog)}</span>
      </div>
      <div class="field" role={labelled ? undefined : 'group'} aria-labelledby={labelled ? undefined : `${id}-label`}>
        {editable ? <Control {...props} id={id} describedBy={describedBy} /> : <Shown {...props} />}
        <p class="error" id={`${id}-error`}>{props.errors.join(' ')}</p>
      </div>
    </>
  );
}

function Control(props: FieldProps & { id: string; describedBy: string }) {
  const { a, id } = props;
  const common = { id, 'aria-describedby': props.describedBy, 'aria-invalid': props.errors.length > 0 ? true : undefined } as const;
  const onInput = (e: Event) => props.onText((e.currentTarget as HTMLInputElement).value);
  if (a.kind === 'relatedEntity') return <RelationControl {...props} common={common} />;
  if (isFile(a)) return <FileControl {...props} common={common} />;
  if (a.type === 'bool') {
    return (
      <select {...common} value={props.text} onChange={onInput}>
        <option value="">(null)</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  }
  if (a.type === 'object') return <textarea {...common} class="json" rows={6} spellcheck={false} value={props.text} onInput={onInput} onBlur={props.onCheck} />;
  if (NUMBER_TYPES.has(a.type)) return <input {...common} type="number" step={INTEGER_TYPES.has(a.type) ? 1 : 'any'} value={props.text} onInput={onInput} />;
  if (a.type === 'date') return <input {...common} type={a.simpleDate ? 'date' : 'datetime-local'} step={a.simpleDate ? undefined : 1} value={props.text} onInput={onInput} />;
  if (a.type === 'duration') return <input {...common} type="text" inputMode="numeric" placeholder="h:mm:ss" value={props.text} onInput={onInput} />;
  return <input {...common} type="text" value={props.text} onInput={onInput} />;
}

type Common = { readonly id: string; readonly 'aria-describedby': string; readonly 'aria-invalid'?: true };

/** an N→1 relation: its key typed, or picked in a dialog; a link opens the related entity */
function RelationControl(props: FieldProps & { common: Common }) {
  const { a, catalog } = props;
  const target = catalog.target(a);
  const [picking, setPicking] = useState(false);
  return (
    <div class="row">
      <input {...props.common} type="text" class="key" value={props.text} onInput={(e) => props.onText(e.currentTarget.value)} />
      {target && <button type="button" onClick={() => setPicking(true)} aria-label={`Choose the ${a.name}`}>Choose…</button>}
      {props.text !== '' && <button type="button" onClick={() => props.onText('')} aria-label={`Clear the ${a.name}`}>Clear</button>}
      {target && props.text !== '' && <RelatedLink target={target} entityKey={props.text} />}
      {target && picking && <EntityPicker target={target} relation={a.name} open={picking} onClose={() => setPicking(false)} onPick={(key) => {
        props.onText(key);
        setPicking(false);
      }} />}
    </div>
  );
}

function FileControl(props: FieldProps & { common: Common }) {
  const { a } = props;
  return (
    <div class="stack file-field">
      <FileShown {...props} />
      <div class="row">
        <input {...props.common} type="file" accept={a.type === 'blob' ? undefined : 'image/*'} onChange={(e) => {
          const f = e.currentTarget.files?.[0];
          if (f) props.onFile(f);
        }} />
        {(props.file || (props.file === undefined && deferredOf(props.entity?.[a.name]))) && (
          <button type="button" class="danger" onClick={() => props.onFile(null)} aria-label={`Remove the ${a.name}`}>Remove</button>
        )}
      </div>
    </div>
  );
}

/** a file as stored, or the change waiting for the save */
function FileShown(props: FieldProps) {
  const { a, dc, file } = props;
  const key = String(props.entity?.__KEY ?? '');
  if (file === null) return <p class="muted">Removed when you save.</p>;
  if (file) {
    return (
      <p class="row">
        {file.preview && <img class="entity-thumb" src={file.preview} alt={`the new ${a.name}`} />}
        <span>{file.name}: sent with the next save.</span>
      </p>
    );
  }
  const d = deferredOf(props.entity?.[a.name]);
  if (!d) return <p class="muted">(empty)</p>;
  const base = `${dc.name}-${key}-${a.name}`;
  if (a.type === 'blob') return <p><a href={d.uri} download={base}>Download the {a.name}</a></p>;
  const as = (format: string) => (/[?&]\$imageformat=/.test(d.uri) ? d.uri.replace(/(\$imageformat=)[^&]*/, `$1${format}`) : `${d.uri}${d.uri.includes('?') ? '&' : '?'}$imageformat=${format}`);
  return (
    <div class="row">
      <a href={d.uri} target="_blank" rel="noopener"><img class="entity-thumb" src={d.uri} alt={`the ${a.name} of ${entityName(dc.name, key)}`} /></a>
      <a href={as('png')} download={`${base}.png`} aria-label={`Download the ${a.name} as PNG`}>PNG</a>
      <a href={as('jpeg')} download={`${base}.jpg`} aria-label={`Download the ${a.name} as JPEG`}>JPEG</a>
    </div>
  );
}

/** a value that is not edited here: computed, the key, a 1→N relation, or a read-only session */
function Shown(props: FieldProps) {
  const { a, catalog, dc, entity } = props;
  const value = entity?.[a.name];
  const key = String(entity?.__KEY ?? '');
  if (value === null || value === undefined) return <p class="muted value">{entity ? '(empty)' : '(set by the server)'}</p>;
  if (isFile(a)) return <FileShown {...props} />;
  const d = deferredOf(value);
  const target = catalog.target(a);
  if (d && target && a.kind === 'relatedEntity' && d.__KEY !== undefined) {
    return <p class="value"><RelatedLink target={target} entityKey={d.__KEY} /></p>;
  }
  if (d && target) {
    const title = `${entityName(dc.name, key)}.${a.name}`;
    return <p class="value"><a href={hashOf({ kind: 'list', dc: dc.name, key, attribute: a.name })}>{title}</a></p>;
  }
  if (a.type === 'object' || Array.isArray(value)) return <pre class="value">{JSON.stringify(value, null, 2)}</pre>;
  return <p class="value">{formatted(a, value)}</p>;
}

/** A link to a related entity, named by its label (read once, quietly), its key on hover. */
function RelatedLink(props: { target: DataClassInfo; entityKey: string }) {
  const { target, entityKey } = props;
  const name = entityName(target.name, entityKey);
  const [label, setLabel] = useState('');
  useEffect(() => {
    const labelled = labelAttribute(target);
    if (!labelled) return;
    let live = true;
    rest<JsonObject>(keyPath(target.name, entityKey) + query({ $attributes: labelled.name }), { quiet: true }).then(
      (e) => live && setLabel(formatted(labelled, e[labelled.name])),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [target, entityKey]);
  return <a href={hashOf({ kind: 'entity', dc: target.name, key: entityKey })} title={name} aria-label={label ? `${label}: ${name}` : undefined}>{label || name}</a>;
}

/** a value as one line in the conflict table */
export function describe(catalog: Catalog, a: AttributeInfo, value: Json | undefined): string {
  if (value === null || value === undefined) return '(empty)';
  const d = deferredOf(value);
  if (d) return a.kind === 'relatedEntity' ? entityName(catalog.target(a)?.name ?? a.type, d.__KEY ?? '?') : 'a file';
  if (a.kind === 'relatedEntity' && typeof value === 'object' && '__KEY' in value) return entityName(catalog.target(a)?.name ?? a.type, String(value.__KEY));
  if (isFile(a) && typeof value === 'object') return 'a new file';
  return display(a, value);
}
