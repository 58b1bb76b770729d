// Where the explorer is, kept in the address's hash so that the browser's Back and Forward, a
// reload and a shared link all work: #/Company, #/Company/(12), #/Company/new,
// #/Company/(12)/staff (the entities a relation reaches), #/Company/set/<id>, and an
// administrator's #/$admin/users, #/$admin/tokens and #/$admin/roles (no dataclass's name begins
// with a $). A route names dataclasses, keys and attributes, never a URL: the URLs are built from
// them, so a crafted link cannot make the page fetch anything but the REST API's own resources.

export type Route =
  | { readonly kind: 'home' }
  | { readonly kind: 'dataclass'; readonly dc: string }
  | { readonly kind: 'entity'; readonly dc: string; readonly key: string }
  | { readonly kind: 'new'; readonly dc: string }
  /** the entities a 1→N relation of one entity reaches: `dc` is the entity's dataclass */
  | { readonly kind: 'list'; readonly dc: string; readonly key: string; readonly attribute: string }
  | { readonly kind: 'set'; readonly dc: string; readonly id: string }
  /** the administration: users, API tokens, roles.json as a matrix */
  | { readonly kind: 'admin'; readonly tab: AdminTab };

export type AdminTab = 'users' | 'tokens' | 'roles';
export const ADMIN_TABS: readonly AdminTab[] = ['users', 'tokens', 'roles'];
const ADMIN = '$admin';

const enc = encodeURIComponent;

export function hashOf(route: Route): string {
  switch (route.kind) {
    case 'home': return '#/';
    case 'dataclass': return `#/${enc(route.dc)}`;
    case 'entity': return `#/${enc(route.dc)}/(${enc(route.key)})`;
    case 'new': return `#/${enc(route.dc)}/new`;
    case 'list': return `#/${enc(route.dc)}/(${enc(route.key)})/${enc(route.attribute)}`;
    case 'set': return `#/${enc(route.dc)}/set/${enc(route.id)}`;
    case 'admin': return `#/${ADMIN}/${route.tab}`;
  }
}

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const [dc, what, a] = parts;
  if (!dc) return { kind: 'home' };
  if (dc === ADMIN) return { kind: 'admin', tab: ADMIN_TABS.find((t) => t === what) ?? 'users' };
  if (what === undefined) return { kind: 'dataclass', dc };
  if (what === 'new') return { kind: 'new', dc };
  if (what === 'set' && a) return { kind: 'set', dc, id: a };
  const key = /^\((.*)\)$/.exec(what);
  if (key) return a ? { kind: 'list', dc, key: key[1], attribute: a } : { kind: 'entity', dc, key: key[1] };
  return { kind: 'dataclass', dc };
}

export function go(route: Route): void {
  location.hash = hashOf(route);
}
