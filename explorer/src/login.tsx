// The login dialog: a native <dialog> (focus kept inside, Escape closes), labelled fields, the
// server's refusal shown under them, and a link for each single sign-on provider of the project
// (GET /rest/$oidc): the browser goes there and comes back to this page, logged in.

import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf, rest } from './api';
import { login } from './session';

interface Provider {
  readonly name: string;
  readonly login: string;
}

/** The project's sign-in providers (none when it has none, or an older server answers 404). */
async function providers(): Promise<Provider[]> {
  try {
    return (await rest<{ providers: Provider[] }>('$oidc', { quiet: true })).providers ?? [];
  } catch {
    return [];
  }
}

export function LoginDialog(props: { open: boolean; reason?: string; onDone: (loggedIn: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [signIns, setSignIns] = useState<Provider[]>([]);

  useEffect(() => {
    if (props.open) void providers().then(setSignIns);
  }, [props.open]);

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
        {signIns.length > 0 && (
          <p class="row">
            {signIns.map((p) => (
              // (back to this very page once signed in)
              <a key={p.name} class="button" href={`${p.login}?redirect=${encodeURIComponent(location.pathname + location.hash)}`}>Sign in with {p.name}</a>
            ))}
          </p>
        )}
      </form>
    </dialog>
  );
}
