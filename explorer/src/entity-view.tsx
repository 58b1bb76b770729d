// One entity: every attribute the catalog lists, in a form that knows each type. A save sends
// only what changed, with __KEY and __STAMP; a stamp that changed meanwhile opens the conflict
// box (mine against the stored values, re-read); errors about a field are shown next to it.
// An entity of a dataclass that tracks its changes is followed while the form is open (live.ts):
// saved elsewhere, the form says so before a save would conflict, and offers the stored values;
// dropped elsewhere, it says that too.

import { useEffect, useRef, useState } from 'preact/hooks';
import { keyPath, messageOf, REST, rest, RestError, type Json, type JsonObject } from './api';
import { isEditable, isFile, labelAttribute, type Catalog, type DataClassInfo } from './catalog';
import { placeErrors, type PlacedErrors } from './entity-errors';
import { ConflictBox, DeleteDialog, type Conflict } from './entity-parts';
import { entityName, fieldId, FieldRow, initialText, type FileChange } from './entity-fields';
import { EntityFunctionsPanel } from './functions';
import { follow, tracksChanges, type LiveState } from './live';
import { LiveBadge } from './live-badge';
import { go } from './routes';
import { fromField } from './values';

export interface EntityViewProps {
  readonly catalog: Catalog;
  readonly dc: DataClassInfo;
  /** undefined: a new entity */
  readonly entityKey: string | undefined;
}

/** 4D's code for a __STAMP that no longer matches */
const STAMP_CHANGED = 1263;
const NO_ERRORS: PlacedErrors = { fields: {}, general: [] };

/** what the watch of the open entity said last: stored again (with its new __STAMP), or gone */
type Elsewhere = { readonly stored: JsonObject } | { readonly dropped: true };

const stampOf = (e: JsonObject | undefined): number => (typeof e?.__STAMP === 'number' ? e.__STAMP : Number.NaN);

export function EntityView(props: EntityViewProps) {
  const { catalog, dc, entityKey } = props;
  const isNew = entityKey === undefined;
  const [entity, setEntity] = useState<JsonObject | undefined>();
  const [loadError, setLoadError] = useState('');
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [files, setFiles] = useState<Record<string, FileChange>>({});
  const [errors, setErrors] = useState<PlacedErrors>(NO_ERRORS);
  const [conflict, setConflict] = useState<Conflict | undefined>();
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [elsewhere, setElsewhere] = useState<Elsewhere | undefined>();
  const [liveState, setLiveState] = useState<{ state: LiveState; detail?: string }>({ state: 'connecting' });
  const form = useRef<HTMLFormElement>(null);
  // (for the watch's handlers, which outlive a render)
  const current = useRef(entity);
  current.current = entity;
  /** this form drops the entity: its own remove event is no news */
  const dropping = useRef(false);
  /**
   * While this form's save or delete is in flight, what the watch says is held: the event of the
   * form's own save may come before the save's answer (and its stamp would look newer than the
   * form's until then). The answer decides (`release`).
   */
  const held = useRef<Elsewhere[] | undefined>(undefined);
  const tell = (news: Elsewhere) => {
    if (held.current) held.current.push(news);
    else if (!('dropped' in news && dropping.current)) setElsewhere(news);
  };
  /** the answer came: `stamp` is the saved one (NaN: none); an event of that stamp or older is the form's own */
  const release = (stamp: number) => {
    const news = held.current ?? [];
    held.current = undefined;
    for (const n of news) {
      if ('stored' in n && stampOf(n.stored) <= stamp) continue;
      tell(n);
    }
  };
  /** a stream was ready (the first load, if later, checks again: a change may have come between) */
  const readySeen = useRef(false);
  const recheck = useRef<(() => void) | undefined>(undefined);

  const may = dc.sessionMay;
  // unknown (absent) means the controls are shown and the server's refusal, if any, is shown
  const readOnly = isNew ? may?.create === false : may?.update === false;
  const mayDrop = !isNew && may?.drop !== false;
  const url = isNew ? '' : keyPath(dc.name, entityKey);
  const name = entityName(dc.name, entityKey ?? '');
  // a UUID key says nothing to a person: the entity's label instead, the key on hover
  const uuidLabel = dc.attributes.find((a) => a.name === dc.key[0]?.name)?.type === 'uuid' ? labelAttribute(dc) : undefined;
  const labelValue = uuidLabel && entity ? entity[uuidLabel.name] : undefined;
  const title = isNew ? `New ${dc.name}` : typeof labelValue === 'string' && labelValue !== '' ? `${dc.name} ${labelValue}` : name;

  useEffect(() => {
    if (isNew) return;
    rest<JsonObject>(url).then(
      (loaded) => {
        setEntity(loaded);
        current.current = loaded;
        // (the stream was ready before this read: what changed between is read again)
        if (readySeen.current) recheck.current?.();
      },
      (e: unknown) => setLoadError(messageOf(e)),
    );
  }, [url]);

  // live: the watch of this entity, while the form is open
  const live = !isNew && tracksChanges(dc);
  useEffect(() => {
    if (!live) return;
    let open = true;
    readySeen.current = false;
    /** read again (a new stream may have missed a change; the first may come after a change the form's read missed) */
    const check = () => {
      if (!current.current) return;
      rest<JsonObject>(url).then(
        (stored) => open && stampOf(stored) !== stampOf(current.current) && tell({ stored }),
        (e: unknown) => open && e instanceof RestError && e.status === 404 && tell({ dropped: true }),
      );
    };
    recheck.current = check;
    const stop = follow(url, {
      onEntity: (stored) => tell({ stored }),
      onRemove: () => tell({ dropped: true }),
      onReady: () => {
        readySeen.current = true;
        check();
      },
      onState: (state, detail) => setLiveState({ state, detail }),
    });
    return () => {
      open = false;
      recheck.current = undefined;
      stop();
    };
  }, [url, live]);

  // the previews of uploads not saved are let go when the view goes
  const previews = useRef<string[]>([]);
  useEffect(() => () => previews.current.forEach((p) => URL.revokeObjectURL(p)), []);

  const shown = dc.attributes.filter((a) => !isNew || isEditable(dc, a));
  const textOf = (name: string) => texts[name] ?? initialText(dc.attributes.find((a) => a.name === name)!, entity);

  const reset = (stored: JsonObject | undefined) => {
    setEntity(stored);
    current.current = stored;
    setTexts({});
    setFiles({});
    setErrors(NO_ERRORS);
    setConflict(undefined);
  };

  /** what changed, as the values the API takes; or the fields whose text is no value */
  const collect = (): { changes: JsonObject } | { invalid: Record<string, string[]> } => {
    const changes: JsonObject = {};
    const invalid: Record<string, string[]> = {};
    for (const a of dc.attributes) {
      if (!isEditable(dc, a)) continue;
      if (isFile(a)) {
        const f = files[a.name];
        if (f !== undefined) changes[a.name] = f === null ? null : { ID: f.id };
        continue;
      }
      const text = texts[a.name];
      if (text === undefined || text === initialText(a, entity)) continue;
      try {
        changes[a.name] = a.kind === 'relatedEntity' ? (text.trim() === '' ? null : { __KEY: text.trim() }) : fromField(a, text);
      } catch (e) {
        invalid[a.name] = [messageOf(e)];
      }
    }
    return Object.keys(invalid).length > 0 ? { invalid } : { changes };
  };

  const focusField = (name: string | undefined) => {
    if (name) form.current?.querySelector<HTMLElement>(`#${fieldId(name)}`)?.focus();
  };

  const send = async (changes: JsonObject, stamp: Json | undefined) => {
    setBusy(true);
    setStatus('');
    let savedStamp = Number.NaN;
    if (!isNew) held.current ??= [];
    try {
      const body = isNew ? changes : { __KEY: entity?.__KEY ?? entityKey, __STAMP: stamp ?? null, ...changes };
      const saved = await rest<JsonObject>(`${REST}/${encodeURIComponent(dc.name)}?$method=update`, { body });
      if (isNew) {
        go({ kind: 'entity', dc: dc.name, key: String(saved.__KEY) });
        return;
      }
      savedStamp = stampOf(saved);
      reset(saved);
      setStatus('Saved.');
    } catch (e) {
      if (e instanceof RestError && e.errCodes.includes(STAMP_CHANGED) && !isNew) {
        // someone saved first: what is stored now, read again, against what was typed
        try {
          setConflict({ stored: await rest<JsonObject>(url), changes });
          setErrors(NO_ERRORS);
        } catch (again) {
          setErrors({ fields: {}, general: [messageOf(again)] });
        }
      } else {
        const placed = e instanceof RestError ? placeErrors(dc, e.items) : { fields: {}, general: [messageOf(e)] };
        setErrors(placed);
        focusField(Object.keys(placed.fields)[0]);
      }
    } finally {
      if (!isNew) release(savedStamp);
      setBusy(false);
    }
  };

  const save = (event: Event) => {
    event.preventDefault();
    const result = collect();
    if ('invalid' in result) {
      setErrors({ fields: result.invalid, general: [] });
      focusField(Object.keys(result.invalid)[0]);
      return;
    }
    if (!isNew && Object.keys(result.changes).length === 0) {
      setStatus('Nothing changed.');
      return;
    }
    void send(result.changes, entity?.__STAMP);
  };

  /** a field edited: its message is about the old text, so it goes (a blur checks the new one) */
  const edit = (name: string, text: string) => {
    setTexts((old) => ({ ...old, [name]: text }));
    if (errors.fields[name]) {
      setErrors((old) => {
        const fields: Record<string, string[]> = { ...old.fields };
        delete fields[name];
        return { fields, general: old.general };
      });
    }
  };

  /** an object's JSON checked when its field is left, not only when the form is sent */
  const check = (name: string) => {
    const result = collect();
    const mine = 'invalid' in result ? result.invalid[name] : undefined;
    setErrors((old) => {
      const fields: Record<string, string[]> = { ...old.fields };
      if (mine) fields[name] = mine;
      else delete fields[name];
      return { fields, general: old.general };
    });
  };

  const upload = async (name: string, type: string, file: File | null) => {
    setErrors((old) => ({ ...old, fields: { ...old.fields, [name]: [] } }));
    if (file === null) {
      setFiles((f) => ({ ...f, [name]: null }));
      return;
    }
    setStatus(`Sending ${file.name}…`);
    try {
      // the bytes go first; the save attaches them to the entity in its own transaction
      const { ID } = await rest<{ ID: string }>(`${REST}/$upload?${type === 'blob' ? '$binary=true' : '$rawPict=true'}`, { raw: file });
      const preview = type === 'blob' ? undefined : URL.createObjectURL(file);
      if (preview) previews.current.push(preview);
      setFiles((f) => ({ ...f, [name]: { id: ID, name: file.name, preview } }));
      setStatus(`${file.name} is ready: save to keep it.`);
    } catch (e) {
      setStatus('');
      setErrors((old) => ({ ...old, fields: { ...old.fields, [name]: [messageOf(e)] } }));
    }
  };

  const drop = async () => {
    setConfirming(false);
    setBusy(true);
    dropping.current = true;
    held.current ??= [];
    try {
      await rest(`${url}?$method=delete`, { method: 'POST' });
      held.current = undefined;
      go({ kind: 'dataclass', dc: dc.name });
    } catch (e) {
      dropping.current = false;
      release(Number.NaN);
      setErrors({ fields: {}, general: [messageOf(e)] });
    } finally {
      setBusy(false);
    }
  };

  /** the values stored now, in place of the form's (its edits go) */
  const reload = async () => {
    setBusy(true);
    try {
      reset(await rest<JsonObject>(url));
      setElsewhere(undefined);
      setStatus('Reloaded: the stored values are shown.');
    } catch (e) {
      if (e instanceof RestError && e.status === 404) setElsewhere({ dropped: true });
      else setErrors({ fields: {}, general: [messageOf(e)] });
    } finally {
      setBusy(false);
    }
  };

  // saved elsewhere since the form read it (an event of this form's own save carries the stamp the form has by then)
  const changed = elsewhere !== undefined && 'stored' in elsewhere && entity !== undefined && stampOf(elsewhere.stored) > stampOf(entity);
  const dropped = elsewhere !== undefined && 'dropped' in elsewhere;
  const edited = Object.keys(texts).length > 0 || Object.keys(files).length > 0;

  if (loadError) {
    return (
      <section class="entity">
        <div class="title-row"><button type="button" onClick={() => history.back()}>← Back</button><h2>{title}</h2></div>
        <p class="error" role="alert">{loadError}</p>
      </section>
    );
  }

  return (
    <section class="entity" aria-labelledby="entity-title">
      <div class="title-row">
        <button type="button" onClick={() => history.back()}>← Back</button>
        <h2 id="entity-title" title={isNew ? undefined : name}>{title}</h2>
        {!isNew && entity && <span class="muted">stamp {String(entity.__STAMP)}</span>}
        {live && <LiveBadge state={liveState.state} detail={liveState.detail} />}
        {readOnly && <span class="muted">read-only for this session</span>}
      </div>
      {!isNew && !entity ? <p class="muted" aria-live="polite">Loading…</p> : (
        <form ref={form} class="stack" onSubmit={save} noValidate aria-labelledby="entity-title">
          {conflict && <ConflictBox catalog={catalog} dc={dc} conflict={conflict} busy={busy}
            onReload={() => {
              reset(conflict.stored);
              setStatus('Reloaded: the stored values are shown.');
            }}
            onOverwrite={() => void send(conflict.changes, conflict.stored.__STAMP)} />}
          {changed && !conflict && !dropped && (
            <div class="elsewhere stack" role="alert" data-testid="changed-elsewhere">
              <h3>Changed elsewhere</h3>
              <p>
                Someone saved this entity since you opened it (stamp {String(entity.__STAMP)}, now {String((elsewhere as { stored: JsonObject }).stored.__STAMP)}).
                {edited ? ' Saving your changes now would conflict with theirs: reload to see the stored values (your changes go), or save and choose then.' : ' Reload to see the stored values.'}
              </p>
              <div class="row"><button type="button" disabled={busy} onClick={() => void reload()}>Reload the stored values</button></div>
            </div>
          )}
          {dropped && (
            <div class="elsewhere stack" role="alert" data-testid="dropped-elsewhere">
              <h3>Deleted elsewhere</h3>
              <p>This entity was dropped since you opened it (or this session may no longer see it): it can no longer be saved.</p>
              <div class="row"><button type="button" onClick={() => go({ kind: 'dataclass', dc: dc.name })}>Back to {dc.name}</button></div>
            </div>
          )}
          <div role="alert" class="form-errors">
            {errors.general.map((m, i) => <p key={i} class="error">{m}</p>)}
          </div>
          <div class="fields">
            {shown.map((a) => (
              <FieldRow key={a.name} catalog={catalog} dc={dc} a={a} entity={entity} readOnly={readOnly}
                text={textOf(a.name)} onText={(t) => edit(a.name, t)}
                file={files[a.name]} onFile={(f) => void upload(a.name, a.type, f)}
                errors={errors.fields[a.name] ?? []} onCheck={a.type === 'object' ? () => check(a.name) : undefined} />
            ))}
          </div>
          {!readOnly && (
            <div class="row entity-actions">
              <button type="submit" class="primary" disabled={busy || dropped}>{isNew ? `Create ${dc.name}` : 'Save'}</button>
              <button type="button" disabled={busy} onClick={() => reset(entity)}>Discard changes</button>
              {mayDrop && <button type="button" class="danger" disabled={busy} onClick={() => setConfirming(true)}>Delete…</button>}
            </div>
          )}
          {readOnly && mayDrop && <div class="row"><button type="button" class="danger" onClick={() => setConfirming(true)}>Delete…</button></div>}
          <p class="ok" role="status">{status}</p>
        </form>
      )}
      {!isNew && entityKey !== undefined && (
        <details class="entity-functions">
          <summary>Functions</summary>
          <EntityFunctionsPanel catalog={props.catalog} dc={dc} entityKey={entityKey} />
        </details>
      )}
      <DeleteDialog open={confirming} title={title} onConfirm={() => void drop()} onCancel={() => setConfirming(false)} />
    </section>
  );
}
