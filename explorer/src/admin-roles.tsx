// roles.json as a matrix (GET /rest/$roles), read only: a row per resource — the datastore's
// functions, each dataclass with its attributes and functions indented beneath it, each
// singleton's functions — and a column per guest, role and privilege held alone; a cell spells
// what that column may do there in letters (R read, C create, U update, D drop, X execute, a dot
// where it may not), and a function's row names the privileges it promotes to. The server judges
// each cell by the grants every request is judged by, so the matrix is what the server does. At a
// phone's width the table scrolls sideways inside its region, the resource column staying put.

import { useCallback, useEffect, useState } from 'preact/hooks';
import { messageOf } from './api';
import { readMatrix, type MatrixAction, type MatrixColumn, type MatrixRow, type RolesMatrix } from './admin-api';

const LETTERS: Readonly<Record<MatrixAction, string>> = { read: 'R', create: 'C', update: 'U', drop: 'D', execute: 'X' };
const ACTIONS: Readonly<Record<MatrixRow['type'], readonly MatrixAction[]>> = {
  datastore: ['read', 'create', 'update', 'drop', 'execute'],
  dataclass: ['read', 'create', 'update', 'drop', 'execute'],
  attribute: ['read', 'create', 'update'],
  function: ['execute'],
};

interface Group {
  readonly key: string;
  /** a title row of its own (the datastore's functions, a singleton's); a dataclass is its own first row */
  readonly title?: string;
  readonly rows: MatrixRow[];
}

/** The rows in groups, in the server's order: `ds.` functions, each dataclass (its attributes and functions), each singleton. */
function groups(rows: readonly MatrixRow[]): Group[] {
  const dataClasses = new Set(rows.filter((r) => r.type === 'dataclass').map((r) => r.resource));
  const out = new Map<string, Group>();
  const add = (key: string, title: string | undefined, row: MatrixRow) => {
    let g = out.get(key);
    if (!g) out.set(key, (g = { key, title, rows: [] }));
    g.rows.push(row);
  };
  for (const r of rows) {
    const prefix = r.resource.includes('.') ? r.resource.slice(0, r.resource.indexOf('.')) : r.resource;
    if (r.type === 'dataclass' || (dataClasses.has(prefix) && r.type !== 'datastore')) add(`dc:${prefix}`, undefined, r);
    else if (r.type === 'datastore' || prefix === 'ds') add('ds', 'Datastore', r);
    else add(`singleton:${prefix}`, `${prefix} (singleton)`, r);
  }
  return [...out.values()];
}

const shortName = (c: MatrixColumn) => c.name.slice(c.name.indexOf(':') + 1);

/** Under a column's name: a role's privileges, what a privilege includes besides itself. */
function holds(c: MatrixColumn): string {
  if (c.kind === 'role') return c.privileges.length > 0 ? c.privileges.join(', ') : 'no privilege';
  const more = c.privileges.filter((p) => p !== shortName(c));
  return more.length > 0 ? `+ ${more.join(', ')}` : '';
}

export function RolesView() {
  const [matrix, setMatrix] = useState<RolesMatrix | undefined>();
  const [error, setError] = useState('');
  const load = useCallback(async () => {
    try {
      setMatrix(await readMatrix());
      setError('');
    } catch (e) {
      setError(messageOf(e));
    }
  }, []);
  useEffect(() => void load(), [load]);

  return (
    <section class="stack" aria-labelledby="roles-title">
      <div class="title-row">
        <h3 id="roles-title">Roles and permissions</h3>
        <button type="button" onClick={() => void load()}>Read again</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {matrix && <Matrix matrix={matrix} />}
    </section>
  );
}

function Matrix(props: { matrix: RolesMatrix }) {
  const { matrix } = props;
  const guest = matrix.columns.filter((c) => c.kind === 'guest');
  const roles = matrix.columns.filter((c) => c.kind === 'role');
  const privileges = matrix.columns.filter((c) => c.kind === 'privilege');
  const columns = [...guest, ...roles, ...privileges];
  const width = columns.length + 2;
  return (
    <>
      <ul class="matrix-notes">
        {matrix.open && <li>This project has no <code>roles.json</code>: every session may do everything, and is an administrator.</li>}
        {matrix.forceLogin && <li>Force login: a guest may only log in (and use what roles.json grants a guest).</li>}
        <li>Users and API tokens are managed by sessions holding the <strong>{matrix.adminPrivilege}</strong> privilege.</li>
        <li>Read only: this is <code>roles.json</code> as the server applies it; edit the file to change it.</li>
      </ul>
      <p class="legend" id="matrix-legend">
        <span><b>R</b> read</span> <span><b>C</b> create</span> <span><b>U</b> update</span> <span><b>D</b> drop</span> <span><b>X</b> execute</span> <span><b>·</b> may not</span>
      </p>
      <div class="scroll matrix-scroll" role="region" aria-labelledby="matrix-caption" aria-describedby="matrix-legend" tabIndex={0}>
        <table class="matrix" data-testid="roles-matrix">
          {/* (read out, not shown: wider than a phone, it would scroll away with the table) */}
          <caption id="matrix-caption" class="visually-hidden">Who may do what on each dataclass, attribute and function</caption>
          <colgroup><col /></colgroup>
          {guest.length > 0 && <colgroup class="group" span={guest.length} />}
          {roles.length > 0 && <colgroup class="group" span={roles.length} />}
          {privileges.length > 0 && <colgroup class="group" span={privileges.length} />}
          <colgroup class="group"><col /></colgroup>
          <thead>
            <tr>
              <th scope="col" rowSpan={2} class="resource">Resource</th>
              {guest.map((c) => <th key={c.name} scope="col" rowSpan={2} class="first" data-column={c.name}>Guest</th>)}
              {roles.length > 0 && <th scope="colgroup" colSpan={roles.length} class="first">Roles</th>}
              {privileges.length > 0 && <th scope="colgroup" colSpan={privileges.length} class="first">Privileges held alone</th>}
              <th scope="col" rowSpan={2} class="first">Promotes</th>
            </tr>
            <tr>
              {[...roles, ...privileges].map((c, i) => (
                <th key={c.name} scope="col" data-column={c.name} class={i === 0 || i === roles.length ? 'first' : undefined} title={c.privileges.length > 0 ? `holds ${c.privileges.join(', ')}` : 'holds no privilege'}>
                  <span class="column-name">{shortName(c)}</span>
                  <span class="column-holds">{holds(c)}</span>
                </th>
              ))}
            </tr>
          </thead>
          {matrix.rows.length === 0 && <tbody><tr><td colSpan={width} class="muted">Nothing is exposed.</td></tr></tbody>}
          {groups(matrix.rows).map((g) => (
            <tbody key={g.key}>
              {g.title && <tr class="group-title"><th scope="rowgroup" colSpan={width}>{g.title}</th></tr>}
              {g.rows.map((r) => <Row key={r.resource} row={r} columns={columns} />)}
            </tbody>
          ))}
        </table>
      </div>
    </>
  );
}

function Row(props: { row: MatrixRow; columns: readonly MatrixColumn[] }) {
  const { row } = props;
  const dot = row.resource.indexOf('.');
  const owner = dot < 0 ? '' : row.resource.slice(0, dot + 1);
  const own = dot < 0 ? row.resource : row.resource.slice(dot + 1);
  const nested = row.type !== 'dataclass' && row.type !== 'datastore';
  const actions = ACTIONS[row.type] ?? ACTIONS.dataclass;
  return (
    <tr class={`matrix-${row.type}`} data-resource={row.resource}>
      <th scope="row" class={nested ? 'resource nested' : 'resource'}>
        {/* the owner's name is read out (Note.secret), the indent shows it */}
        {owner && <span class="visually-hidden">{owner}</span>}
        <span class="resource-name">{own}{row.type === 'function' ? '()' : ''}</span>
        <span class="resource-type">{row.type}</span>
      </th>
      {props.columns.map((c, i) => {
        const may = actions.filter((a) => row.allowed[a]?.includes(c.name));
        const said = may.length > 0 ? may.join(', ') : 'nothing';
        return (
          <td key={c.name} data-column={c.name} class={`${may.length > 0 ? 'may' : 'may-not'}${i === 0 || c.kind !== props.columns[i - 1].kind ? ' first' : ''}`} title={said}>
            <span class="letters" aria-hidden="true">{actions.map((a) => (may.includes(a) ? LETTERS[a] : '·')).join('')}</span>
            <span class="visually-hidden">{said}</span>
          </td>
        );
      })}
      <td class="promote first">{row.promote && row.promote.length > 0 ? row.promote.join(', ') : ''}</td>
    </tr>
  );
}
