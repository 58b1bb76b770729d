// API tokens (/rest/$tokens): a table of them (owner, privileges, expiry, last use), a form that
// makes one for a user — with some of the privileges that user's roles give, and an expiry — and
// its secret shown once, with a copy button (the server keeps only its hash: no later answer holds
// it), and a revocation that asks first.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';
import { createToken, listTokens, listUsers, privilegesOf, revokeToken, type NewToken, type RolesMatrix, type TokenInfo, type UserInfo } from './admin-api';
import { ConfirmDialog, NameChecks, Time } from './admin-parts';

const EXPIRIES = [
  { value: 'never', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
  { value: 'date', label: 'At the end of a date…' },
];

export function TokensView(props: { matrix: RolesMatrix }) {
  const [tokens, setTokens] = useState<TokenInfo[] | undefined>();
  const [users, setUsers] = useState<UserInfo[] | undefined>();
  const [loadError, setLoadError] = useState('');
  const [status, setStatus] = useState('');
  const [shown, setShown] = useState('');
  const [made, setMade] = useState<NewToken | undefined>();
  const [revoking, setRevoking] = useState<TokenInfo | undefined>();

  const load = useCallback(async () => {
    try {
      const [t, u] = await Promise.all([listTokens(), listUsers()]);
      setTokens(t);
      setUsers(u);
      setLoadError('');
    } catch (e) {
      setLoadError(messageOf(e));
    }
  }, []);
  useEffect(() => void load(), [load]);

  const listed = (tokens ?? []).filter((t) => shown === '' || t.userName === shown);
  const now = Date.now();

  return (
    <section class="stack" aria-labelledby="tokens-title">
      <div class="title-row">
        <h3 id="tokens-title">API tokens</h3>
        <button type="button" onClick={() => void load()}>Read again</button>
      </div>
      <p class="muted">A script sends a token as <code>Authorization: Bearer …</code>: it acts as the token's user with the token's privileges, without a cookie.</p>
      {loadError && <p class="error" role="alert" data-testid="tokens-error">{loadError}</p>}
      <p class="ok" role="status" data-testid="tokens-status">{status}</p>
      {made && <Secret token={made} onDone={() => setMade(undefined)} />}
      {tokens && users && (
        <>
          <div class="row">
            <label for="tokens-of">Show the tokens of</label>
            <select id="tokens-of" value={shown} onChange={(e) => setShown((e.currentTarget as HTMLSelectElement).value)}>
              <option value="">every user</option>
              {users.map((u) => <option key={u.userName} value={u.userName}>{u.userName}</option>)}
            </select>
          </div>
          <div class="scroll" role="region" aria-labelledby="tokens-caption" tabIndex={0}>
            <table class="values admin-table" data-testid="tokens-table">
              <caption id="tokens-caption">{listed.length === 1 ? '1 token' : `${listed.length} tokens`}</caption>
              <thead><tr><th scope="col">Name</th><th scope="col">User</th><th scope="col">Privileges</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                {listed.length === 0 && <tr><td colSpan={7} class="muted">No token{shown ? ` of ${shown}` : ''}.</td></tr>}
                {listed.map((t) => {
                  const expired = t.expires !== null && Date.parse(t.expires) <= now;
                  return (
                    <tr key={t.id} data-token={t.id}>
                      <th scope="row">{t.name}</th>
                      <td>{t.userName}</td>
                      <td>{t.privileges.length > 0 ? t.privileges.join(', ') : <span class="muted">none</span>}</td>
                      <td><Time iso={t.created} /></td>
                      <td><Time iso={t.expires} none="never" />{expired && <strong class="error-text"> (expired)</strong>}</td>
                      <td><Time iso={t.lastUsed} none="never" /></td>
                      <td class="actions"><button type="button" class="danger" aria-label={`Revoke ${t.name} of ${t.userName}`} onClick={() => setRevoking(t)}>Revoke</button></td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <CreateToken matrix={props.matrix} users={users} onMade={(t) => {
            setMade(t);
            setStatus('');
            void load();
          }} />
        </>
      )}
      <RevokeDialog token={revoking} onCancel={() => setRevoking(undefined)} onDone={(t) => {
        setRevoking(undefined);
        setStatus(`Revoked “${t.name}” of ${t.userName}: it answers 401 from now on.`);
        void load();
      }} />
    </section>
  );
}

/** The new token's secret, once: focused when it appears, with a copy button. */
function Secret(props: { token: NewToken; onDone: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState('');
  useEffect(() => {
    box.current?.focus();
    setCopied('');
  }, [props.token]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.token.token);
      setCopied('Copied to the clipboard.');
    } catch {
      // (no clipboard API, or not allowed: the old way, from the selected field)
      field.current?.select();
      setCopied(document.execCommand('copy') ? 'Copied to the clipboard.' : 'The browser refused to copy: select the text and copy it yourself.');
    }
  };
  return (
    <div class="secret stack" ref={box} tabIndex={-1} role="region" aria-labelledby="secret-title" data-testid="token-secret-box">
      <h3 id="secret-title">The token “{props.token.name}” for {props.token.userName}</h3>
      <p><strong>Copy it now: it will not be shown again.</strong> The server keeps only its hash.</p>
      <div class="row">
        <label for="token-secret" class="visually-hidden">The token's secret</label>
        <input id="token-secret" ref={field} readOnly value={props.token.token} spellcheck={false} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} data-testid="token-secret" />
        <button type="button" class="primary" onClick={() => void copy()}>Copy</button>
        <button type="button" onClick={props.onDone}>Done</button>
      </div>
      <p class="ok" role="status">{copied}</p>
    </div>
  );
}

function CreateToken(props: { matrix: RolesMatrix; users: readonly UserInfo[]; onMade: (token: NewToken) => void }) {
  const [userName, setUserName] = useState('');
  const [name, setName] = useState('');
  const [privileges, setPrivileges] = useState<string[]>([]);
  const [expiry, setExpiry] = useState('never');
  const [date, setDate] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const user = props.users.find((u) => u.userName === userName);
  const held = user ? privilegesOf(props.matrix, user.roles) : [];

  const choose = (next: string) => {
    setUserName(next);
    const u = props.users.find((x) => x.userName === next);
    // every privilege the user holds, to untick from
    setPrivileges(u ? privilegesOf(props.matrix, u.roles) : []);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const expires = expiry === 'never' ? undefined : expiry === 'date' ? endOf(date) : Number(expiry);
      const token = await createToken({ userName, name, privileges, ...(expires === undefined ? {} : { expires }) });
      setName('');
      setExpiry('never');
      setDate('');
      props.onMade(token);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack admin-form" onSubmit={submit} aria-labelledby="create-token-title">
      <h3 id="create-token-title">Create a token</h3>
      <div class="row">
        <span class="pair">
          <label for="token-user">User</label>
          <select id="token-user" required value={userName} aria-describedby="create-token-error" onChange={(e) => choose((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Choose a user</option>
            {props.users.map((u) => <option key={u.userName} value={u.userName}>{u.userName}</option>)}
          </select>
        </span>
        <span class="pair">
          <label for="token-name">Name</label>
          <input id="token-name" required value={name} placeholder="e.g. nightly export" aria-describedby="create-token-error" onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        </span>
      </div>
      {user && (
        <NameChecks legend="Privileges" name="token-privilege" names={held} checked={privileges} onChange={setPrivileges}
          hint={`What the token carries, among what the roles of ${user.userName} give (none ticked: a guest's rights, as ${user.userName}). It never holds more than ${user.userName} holds at the time of a request.`}
          empty={`${user.userName} holds no privilege: the token acts as ${user.userName} with a guest's rights.`} />
      )}
      <div class="row">
        <span class="pair">
          <label for="token-expiry">Expires</label>
          <select id="token-expiry" value={expiry} onChange={(e) => setExpiry((e.currentTarget as HTMLSelectElement).value)}>
            {EXPIRIES.map((x) => <option key={x.value} value={x.value}>{x.label}</option>)}
          </select>
        </span>
        {expiry === 'date' && (
          <span class="pair">
            <label for="token-expiry-date">Date</label>
            <input id="token-expiry-date" type="date" required value={date} min={today()} onInput={(e) => setDate((e.currentTarget as HTMLInputElement).value)} />
          </span>
        )}
      </div>
      <p id="create-token-error" class="error" role="alert">{error}</p>
      <div class="row"><button type="submit" class="primary" disabled={busy}>Create token</button></div>
    </form>
  );
}

function RevokeDialog(props: { token: TokenInfo | undefined; onCancel: () => void; onDone: (token: TokenInfo) => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const t = props.token;
  useEffect(() => setError(''), [t]);
  const confirm = async () => {
    if (!t) return;
    setBusy(true);
    try {
      await revokeToken(t.id);
      props.onDone(t);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog open={t !== undefined} id="revoke-token" title={`Revoke “${t?.name ?? ''}”?`} text={`Whatever uses the token “${t?.name ?? ''}” of ${t?.userName ?? ''} is refused (401) from now on, on every instance. This cannot be undone.`} action="Revoke" busy={busy} error={error} onConfirm={() => void confirm()} onCancel={props.onCancel} />
  );
}

/** The last second of a local date (yyyy-mm-dd), as ISO. */
function endOf(date: string): string {
  const d = new Date(`${date}T23:59:59`);
  return Number.isNaN(d.getTime()) ? date : d.toISOString();
}

function today(): string {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
