// The built-in users (/rest/$users): a table of them with their roles, a form to add one (its
// roles ticked among roles.json's), and for each a new password, new roles or its removal, each
// in a dialog that shows the server's refusal and keeps what was typed.

import { useCallback, useEffect, useState } from 'preact/hooks';
import { messageOf } from './api';
import { addUser, changeUser, listUsers, removeUser, roleNames, type RolesMatrix, type UserInfo } from './admin-api';
import { ConfirmDialog, ModalDialog, NameChecks, Time } from './admin-parts';

type Pending = { readonly kind: 'password' | 'roles' | 'remove'; readonly user: UserInfo };

export function UsersView(props: { matrix: RolesMatrix; userName: string; onSelfChanged: () => void }) {
  const roles = roleNames(props.matrix);
  const [users, setUsers] = useState<UserInfo[] | undefined>();
  const [loadError, setLoadError] = useState('');
  const [status, setStatus] = useState('');
  const [pending, setPending] = useState<Pending | undefined>();

  const load = useCallback(async () => {
    try {
      setUsers(await listUsers());
      setLoadError('');
    } catch (e) {
      setLoadError(messageOf(e));
    }
  }, []);
  useEffect(() => void load(), [load]);

  /** after a change: the list again, and the session's rights again when the change was to its own user */
  const changed = async (user: string, text: string) => {
    setPending(undefined);
    await load();
    setStatus(text);
    if (user.toLowerCase() === props.userName.toLowerCase()) props.onSelfChanged();
  };

  return (
    <section class="stack" aria-labelledby="users-title">
      <div class="title-row">
        <h3 id="users-title">Users</h3>
        <button type="button" onClick={() => void load()}>Read again</button>
      </div>
      {loadError && <p class="error" role="alert" data-testid="users-error">{loadError}</p>}
      <p class="ok" role="status" data-testid="users-status">{status}</p>
      {users && (
        <div class="scroll" role="region" aria-labelledby="users-caption" tabIndex={0}>
          <table class="values admin-table" data-testid="users-table">
            <caption id="users-caption">{users.length === 1 ? '1 user' : `${users.length} users`}</caption>
            <thead><tr><th scope="col">User</th><th scope="col">Roles</th><th scope="col">Created</th><th scope="col">Password changed</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              {users.length === 0 && <tr><td colSpan={5} class="muted">No user yet: add one below.</td></tr>}
              {users.map((u) => (
                <tr key={u.userName} data-user={u.userName}>
                  <th scope="row">{u.userName}</th>
                  <td>{u.roles.length > 0 ? u.roles.join(', ') : <span class="muted">none</span>}</td>
                  <td><Time iso={u.created} /></td>
                  <td><Time iso={u.passwordChanged} /></td>
                  <td class="actions">
                    <button type="button" aria-label={`Reset password of ${u.userName}`} onClick={() => setPending({ kind: 'password', user: u })}>Reset password</button>
                    <button type="button" aria-label={`Change roles of ${u.userName}`} onClick={() => setPending({ kind: 'roles', user: u })}>Change roles</button>
                    <button type="button" class="danger" aria-label={`Remove ${u.userName}`} onClick={() => setPending({ kind: 'remove', user: u })}>Remove</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {users && <AddUser roles={roles} onAdded={(u) => changed(u.userName, `Added ${u.userName}.`)} />}
      <PasswordDialog user={pending?.kind === 'password' ? pending.user : undefined} onCancel={() => setPending(undefined)} onDone={(u) => changed(u.userName, `The password of ${u.userName} was reset.`)} />
      <RolesDialog user={pending?.kind === 'roles' ? pending.user : undefined} roles={roles} onCancel={() => setPending(undefined)} onDone={(u) => changed(u.userName, `${u.userName} now has ${u.roles.length > 0 ? `the roles ${u.roles.join(', ')}` : 'no role'}.`)} />
      <RemoveDialog user={pending?.kind === 'remove' ? pending.user : undefined} onCancel={() => setPending(undefined)} onDone={(name) => changed(name, `Removed ${name}.`)} />
    </section>
  );
}

function AddUser(props: { roles: readonly string[]; onAdded: (user: UserInfo) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [checked, setChecked] = useState<string[]>([]);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const user = await addUser(name, password, checked);
      setName('');
      setPassword('');
      setChecked([]);
      props.onAdded(user);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack admin-form" onSubmit={submit} aria-labelledby="add-user-title">
      <h3 id="add-user-title">Add a user</h3>
      <div class="row">
        <span class="pair">
          <label for="new-user-name">User name</label>
          <input id="new-user-name" autocomplete="off" required value={name} aria-describedby="add-user-error" onInput={(e) => {
            setName((e.currentTarget as HTMLInputElement).value);
            setError('');
          }} />
        </span>
        <span class="pair">
          <label for="new-user-password">Password</label>
          <input id="new-user-password" type="password" autocomplete="new-password" required value={password} aria-describedby="add-user-error" onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />
        </span>
      </div>
      <NameChecks legend="Roles" name="new-user-role" names={props.roles} checked={checked} onChange={setChecked} empty="roles.json defines no role." />
      <p id="add-user-error" class="error" role="alert">{error}</p>
      <div class="row"><button type="submit" class="primary" disabled={busy}>Add user</button></div>
    </form>
  );
}

function PasswordDialog(props: { user: UserInfo | undefined; onCancel: () => void; onDone: (user: UserInfo) => void }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const name = props.user?.userName ?? '';
  useEffect(() => {
    setPassword('');
    setError('');
  }, [props.user]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      props.onDone(await changeUser(name, { password }));
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <ModalDialog open={props.user !== undefined} id="reset-password" title={`Reset the password of ${name}`} onClose={props.onCancel}>
      <form class="stack" onSubmit={submit}>
        <p class="muted">{name} logs in with the new password from now on, and a lockout after wrong passwords ends.</p>
        <label>New password <input name="password" type="password" autocomplete="new-password" required value={password} aria-describedby="reset-password-error" onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} /></label>
        <p id="reset-password-error" class="error" role="alert">{error}</p>
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>Reset password</button>
          <button type="button" onClick={props.onCancel}>Cancel</button>
        </div>
      </form>
    </ModalDialog>
  );
}

function RolesDialog(props: { user: UserInfo | undefined; roles: readonly string[]; onCancel: () => void; onDone: (user: UserInfo) => void }) {
  const [checked, setChecked] = useState<string[]>([]);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const name = props.user?.userName ?? '';
  useEffect(() => {
    setChecked([...(props.user?.roles ?? [])]);
    setError('');
  }, [props.user]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      props.onDone(await changeUser(name, { roles: checked }));
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <ModalDialog open={props.user !== undefined} id="change-roles" title={`Change the roles of ${name}`} onClose={props.onCancel}>
      <form class="stack" onSubmit={submit}>
        <NameChecks legend="Roles" name="change-role" names={props.roles} checked={checked} onChange={setChecked} empty="roles.json defines no role." />
        <p class="error" role="alert">{error}</p>
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>Save roles</button>
          <button type="button" onClick={props.onCancel}>Cancel</button>
        </div>
      </form>
    </ModalDialog>
  );
}

function RemoveDialog(props: { user: UserInfo | undefined; onCancel: () => void; onDone: (name: string) => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const name = props.user?.userName ?? '';
  useEffect(() => setError(''), [props.user]);
  const confirm = async () => {
    setBusy(true);
    try {
      await removeUser(name);
      props.onDone(name);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog open={props.user !== undefined} id="remove-user" title={`Remove ${name}?`} text={`${name} can no longer log in and the API tokens of ${name} stop working at once (sessions already open last until they end). This cannot be undone.`} action="Remove" busy={busy} error={error} onConfirm={() => void confirm()} onCancel={props.onCancel} />
  );
}
