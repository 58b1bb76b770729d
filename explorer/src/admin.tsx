// The administration (an administrator's only: the frame offers it when GET /rest/$roles answers,
// admin-api.ts): the built-in users, their API tokens and roles.json as a matrix, one view each
// under #/$admin/…, with links between them. A refusal is shown in the dialog or the form that
// asked, which keeps what was typed: nothing is half-made, since each change is one request the
// server makes whole or not at all.

import type { RolesMatrix } from './admin-api';
import { RolesView } from './admin-roles';
import { TokensView } from './admin-tokens';
import { UsersView } from './admin-users';
import { ADMIN_TABS, hashOf, type AdminTab } from './routes';

const TAB_LABELS: Readonly<Record<AdminTab, string>> = { users: 'Users', tokens: 'Tokens', roles: 'Roles' };

export function AdminView(props: { tab: AdminTab; matrix: RolesMatrix | undefined; userName: string; onSelfChanged: () => void }) {
  const { matrix } = props;
  return (
    <section class="admin stack" aria-labelledby="admin-title">
      <h2 id="admin-title">Administration</h2>
      {!matrix
        ? <p class="error" role="alert">The administration is for administrators: log in as a user holding the admin privilege.</p>
        : <>
          <nav aria-label="Administration views">
            <ul class="tabs">
              {ADMIN_TABS.map((t) => (
                <li key={t}><a href={hashOf({ kind: 'admin', tab: t })} aria-current={t === props.tab ? 'page' : undefined}>{TAB_LABELS[t]}</a></li>
              ))}
            </ul>
          </nav>
          {props.tab === 'users' && <UsersView matrix={matrix} userName={props.userName} onSelfChanged={props.onSelfChanged} />}
          {props.tab === 'tokens' && <TokensView matrix={matrix} />}
          {props.tab === 'roles' && <RolesView />}
        </>}
    </section>
  );
}
