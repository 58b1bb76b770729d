// The explorer's frame: a header (who is logged in), the dataclasses with their counts, and the
// view the address's hash names. The catalog is read again whenever the session changes, since
// what a session may see is what its catalog lists; a session holding the admin privilege is
// also offered the administration (admin.tsx), from /rest/$roles. A dataclass the session may not
// read is shown locked (a login may open it), never a login dialog of its own accord: that opens
// when the person asks, or when the datastore refuses a request it made (a 401).

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { askLogin, keyPath, messageOf, onLoginNeeded, query, REST, rest } from './api';
import { AdminView } from './admin';
import { probeAdministration, type RolesMatrix } from './admin-api';
import { loadCatalog, mayRead, type Catalog, type DataClassInfo } from './catalog';
import { CollectionView } from './collection-view';
import { EntityView } from './entity-view';
import { Lock } from './lock';
import { LoginDialog } from './login';
import { RequestsPanel } from './requests';
import { go, hashOf, parseHash, type Route } from './routes';
import { currentSession, logout, type SessionInfo } from './session';

export function App() {
  const [route, setRoute] = useState<Route>(() => parseHash(location.hash));
  const [catalog, setCatalog] = useState<Catalog | undefined>();
  // the views start afresh when the catalog says something new (another session's view of the
  // model); a login that changes nothing (the same user again after a timeout) keeps a form's edits
  const catalogText = useRef('');
  const [catalogVersion, setCatalogVersion] = useState(0);
  const [failure, setFailure] = useState('');
  const [session, setSession] = useState<SessionInfo>({ userName: '', privileges: [] });
  /** roles.json as a matrix when this session is an administrator */
  const [administration, setAdministration] = useState<RolesMatrix | undefined>();
  const [login, setLogin] = useState<{ open: boolean; reason?: string }>({ open: false });
  const [generation, setGeneration] = useState(0);
  const [menuOpen, setMenuOpen] = useState(false);
  const [showRequests, setShowRequests] = useState(false);

  useEffect(() => {
    const onHash = () => {
      setRoute(parseHash(location.hash));
      setMenuOpen(false);
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => onLoginNeeded((error) => setLogin({ open: true, reason: error?.message })), []);

  // the session changed (or the explorer opened): what it sees is read again
  useEffect(() => {
    let live = true;
    setFailure('');
    Promise.all([loadCatalog(), currentSession().then(async (s) => [s, await probeAdministration(s)] as const)]).then(
      ([c, [s, a]]) => {
        if (!live) return;
        const text = JSON.stringify([c.dataClasses, c.methods, c.singletons]);
        if (text !== catalogText.current) {
          catalogText.current = text;
          setCatalog(c);
          setCatalogVersion((v) => v + 1);
        }
        setSession(s);
        setAdministration(a);
      },
      (e: unknown) => live && setFailure(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [generation]);

  const refresh = useCallback(() => setGeneration((g) => g + 1), []);
  const doLogout = async () => {
    try {
      await logout();
    } finally {
      refresh();
    }
  };

  return (
    <div class="app">
      <header class="top">
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="dataclasses" onClick={() => setMenuOpen(!menuOpen)}>Dataclasses</button>
        <h1><a href="#/">Data Explorer</a></h1>
        <div class="who" aria-live="polite">
          {session.userName ? <span class="who-name"><span class="who-prefix">Logged in as </span><strong>{session.userName}</strong></span> : <span class="muted">Guest</span>}
          {session.userName
            ? <button type="button" onClick={doLogout}>Log out</button>
            : <button type="button" onClick={() => setLogin({ open: true })}>Log in</button>}
        </div>
      </header>
      <div id="dataclasses" class={menuOpen ? 'side open' : 'side'}>
        <nav aria-label="Dataclasses">
          {catalog && <DataClassList catalog={catalog} current={'dc' in route ? route.dc : undefined} generation={generation} />}
        </nav>
        <label class="check side-requests"><input type="checkbox" checked={showRequests} onChange={(e) => setShowRequests((e.currentTarget as HTMLInputElement).checked)} /> Show the requests</label>
        {administration && (
          <nav aria-label="Administration" class="side-admin">
            <ul class="dataclasses">
              <li><a href={hashOf({ kind: 'admin', tab: 'users' })} aria-current={route.kind === 'admin' ? 'page' : undefined} onClick={() => setMenuOpen(false)}>Administration</a></li>
            </ul>
          </nav>
        )}
      </div>
      <main class="main" id="main">
        {failure && <p class="error" role="alert">The catalog could not be read: {failure}</p>}
        {route.kind === 'admin'
          ? catalog && <AdminView key={session.userName} tab={route.tab} matrix={administration} userName={session.userName} onSelfChanged={refresh} />
          : catalog && <View key={catalogVersion} route={route} catalog={catalog} onChanged={refresh} />}
      </main>
      {showRequests && <RequestsPanel onClose={() => setShowRequests(false)} />}
      <LoginDialog open={login.open} reason={login.reason} onDone={(ok) => {
        setLogin({ open: false });
        if (ok) refresh();
      }} />
    </div>
  );
}

function View(props: { route: Route; catalog: Catalog; onChanged: () => void }) {
  const { route, catalog } = props;
  if (route.kind === 'admin') return null;
  if (route.kind === 'home') return <Home catalog={catalog} />;
  const dc = catalog.byName(route.dc);
  if (!dc) return <p class="error" role="alert">This session sees no dataclass named {route.dc}.</p>;
  if (!mayRead(dc)) return <Locked dc={dc} />;
  switch (route.kind) {
    case 'dataclass':
      return <CollectionView key={`dc:${dc.name}`} catalog={catalog} dc={dc} base={`${REST}/${encodeURIComponent(dc.name)}`} title={dc.name} source="dataclass" />;
    case 'list': {
      const attribute = dc.attributes.find((a) => a.name === route.attribute && a.kind === 'relatedEntities');
      const target = attribute && catalog.target(attribute);
      if (!attribute || !target) return <p class="error" role="alert">{dc.name} has no 1→N relation named {route.attribute} that this session sees.</p>;
      const title = `${dc.name}(${route.key}).${attribute.name}`;
      return <CollectionView key={`list:${title}`} catalog={catalog} dc={target} base={`${keyPath(dc.name, route.key)}/${encodeURIComponent(attribute.name)}`} title={title} source="relation" />;
    }
    case 'set':
      return <CollectionView key={`set:${route.id}`} catalog={catalog} dc={dc} base={`${REST}/${encodeURIComponent(dc.name)}/$entityset/${encodeURIComponent(route.id)}`} title={`${dc.name} set ${route.id}`} source="set" />;
    case 'entity':
      return <EntityView key={`e:${dc.name}:${route.key}`} catalog={catalog} dc={dc} entityKey={route.key} />;
    case 'new':
      return <EntityView key={`new:${dc.name}`} catalog={catalog} dc={dc} entityKey={undefined} />;
  }
}

function Home(props: { catalog: Catalog }) {
  return (
    <section class="stack">
      <h2>Welcome</h2>
      <p>Pick a dataclass to browse its entities. Everything here goes through the server's REST API under <code>/rest</code>, with this page's session.</p>
      {props.catalog.dataClasses.length === 0 && <p class="muted">This session sees no dataclass: log in to see more.</p>}
    </section>
  );
}

/** A dataclass this session may not read: said so, with the login that may open it. */
function Locked(props: { dc: DataClassInfo }) {
  return (
    <section class="stack locked-page">
      <h2>{props.dc.name}</h2>
      <p><Lock /> This session may not read the {props.dc.name} entities: a login may show them.</p>
      <p><button type="button" class="primary" onClick={askLogin}>Log in to see {props.dc.name}</button></p>
    </section>
  );
}

function DataClassList(props: { catalog: Catalog; current?: string; generation: number }) {
  const [counts, setCounts] = useState<Record<string, number | string>>({});
  useEffect(() => {
    for (const dc of props.catalog.dataClasses) {
      // (a dataclass the session may not read is locked, not counted; a count refused is a '?', not a login dialog)
      if (!mayRead(dc)) continue;
      rest<{ __COUNT: number }>(`${REST}/${encodeURIComponent(dc.name)}${query({ $top: 0 })}`, { quiet: true }).then(
        (a) => setCounts((c) => ({ ...c, [dc.name]: a.__COUNT })),
        () => setCounts((c) => ({ ...c, [dc.name]: '?' })),
      );
    }
  }, [props.catalog, props.generation]);
  return (
    <ul class="dataclasses">
      {props.catalog.dataClasses.map((dc) => (
        <li key={dc.name}>
          <a href={`#/${encodeURIComponent(dc.name)}`} aria-current={props.current === dc.name ? 'page' : undefined} onClick={() => go({ kind: 'dataclass', dc: dc.name })}>
            <span>{dc.name}</span>
            {mayRead(dc)
              ? <span class="count" aria-label={`${counts[dc.name] ?? 'unknown'} entities`}>{format(counts[dc.name])}</span>
              : <span class="count" title="log in to see" aria-label="locked: log in to see" data-testid="locked"><Lock /></span>}
          </a>
        </li>
      ))}
    </ul>
  );
}

function format(n: number | string | undefined): string {
  return typeof n === 'number' ? n.toLocaleString('en') : n ?? '…';
}
