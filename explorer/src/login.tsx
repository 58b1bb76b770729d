// The login dialog: a native <dialog> (focus kept inside, Escape closes), labelled fields, the
// server's refusal shown under them.

import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';
import { login } from './session';

export function LoginDialog(props: { open: boolean; reason?: string; onDone: (loggedIn: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (props.open && !d.open) {
      setError('');
      d.showModal();
    } else if (!props.open && d.open) d.close();
  }, [props.open]);

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    try {
      await login(String(form.get('user') ?? ''), String(form.get('password') ?? ''));
      props.onDone(true);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={dialog} aria-labelledby="login-title" onClose={() => props.open && props.onDone(false)}>
      <form onSubmit={submit} class="stack">
        <h2 id="login-title">Log in</h2>
        {props.reason && <p class="muted">{props.reason}</p>}
        <label>User name <input name="user" autocomplete="username" required /></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" required aria-describedby="login-error" /></label>
        <p id="login-error" class="error" role="alert">{error}</p>
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>Log in</button>
          <button type="button" onClick={() => props.onDone(false)}>Cancel</button>
        </div>
      </form>
    </dialog>
  );
}
