// The explorer's frame: a header (who is logged in), the dataclasses with their counts, and the
// view the address's hash names. The catalog is read again whenever the session changes, since
// what a session may see is what its catalog lists.

import { useCallback, useEffect, useState } from 'preact/hooks';
import { messageOf, onLoginNeeded, query, REST, rest } from './api';
import { loadCatalog, type Catalog } from './catalog';
import { CollectionView } from './collection-view';
import { EntityView } from './entity-view';
import { LoginDialog } from './login';
import { go, parseHash, type Route } from './routes';
import { currentSession, logout, type SessionInfo } from './session';

export function App() {
  const [route, setRoute] = useState<Route>(() => parseHash(location.hash));
  const [catalog, setCatalog] = useState<Catalog | undefined>();
  // the generation the catalog was read for: the views start afresh with each new catalog
  const [catalogGeneration, setCatalogGeneration] = useState(-1);
  const [failure, setFailure] = useState('');
  const [session, setSession] = useState<SessionInfo>({ userName: '', privileges: [] });
  const [login, setLogin] = useState<{ open: boolean; reason?: string }>({ open: false });
  const [generation, setGeneration] = useState(0);
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    const onHash = () => {
      setRoute(parseHash(location.hash));
      setMenuOpen(false);
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => onLoginNeeded((error) => setLogin({ open: true, reason: error.message })), []);

  // the session changed (or the explorer opened): what it sees is read again
  useEffect(() => {
    let live = true;
    setFailure('');
    Promise.all([loadCatalog(), currentSession()]).then(
      ([c, s]) => {
        if (!live) return;
        setCatalog(c);
        setCatalogGeneration(generation);
        setSession(s);
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
          {session.userName ? <span>Logged in as <strong>{session.userName}</strong></span> : <span class="muted">Guest</span>}
          {session.userName
            ? <button type="button" onClick={doLogout}>Log out</button>
            : <button type="button" onClick={() => setLogin({ open: true })}>Log in</button>}
        </div>
      </header>
      <nav id="dataclasses" class={menuOpen ? 'side open' : 'side'} aria-label="Dataclasses">
        {catalog && <DataClassList catalog={catalog} current={'dc' in route ? route.dc : undefined} generation={generation} />}
      </nav>
      <main class="main" id="main">
        {failure && <p class="error" role="alert">The catalog could not be read: {failure}</p>}
        {catalog && <View key={`${catalogGeneration}`} route={route} catalog={catalog} onChanged={refresh} />}
      </main>
      <LoginDialog open={login.open} reason={login.reason} onDone={(ok) => {
        setLogin({ open: false });
        if (ok) refresh();
      }} />
    </div>
  );
}

function View(props: { route: Route; catalog: Catalog; onChanged: () => void }) {
  const { route, catalog } = props;
  if (route.kind === 'home') return <Home catalog={catalog} />;
  const dc = catalog.byName(route.dc);
  if (!dc) return <p class="error" role="alert">This session sees no dataclass named {route.dc}.</p>;
  switch (route.kind) {
    case 'dataclass':
      return <CollectionView key={`dc:${dc.name}`} catalog={catalog} dc={dc} base={`${REST}/${encodeURIComponent(dc.name)}`} title={dc.name} source="dataclass" />;
    case 'list':
      return <CollectionView key={`list:${route.uri}`} catalog={catalog} dc={dc} base={route.uri} title={route.title} source="relation" />;
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

function DataClassList(props: { catalog: Catalog; current?: string; generation: number }) {
  const [counts, setCounts] = useState<Record<string, number | string>>({});
  useEffect(() => {
    for (const dc of props.catalog.dataClasses) {
      rest<{ __COUNT: number }>(`${REST}/${encodeURIComponent(dc.name)}${query({ $top: 0 })}`).then(
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
            <span class="count" aria-label={`${counts[dc.name] ?? 'unknown'} entities`}>{format(counts[dc.name])}</span>
          </a>
        </li>
      ))}
    </ul>
  );
}

function format(n: number | string | undefined): string {
  return typeof n === 'number' ? n.toLocaleString('en') : n ?? '…';
}
