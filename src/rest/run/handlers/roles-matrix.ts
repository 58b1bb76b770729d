// roles.json as a matrix (GET /rest/$roles, the Data Explorer's read-only view): for each column —
// a guest, each role, each privilege held alone (with what it includes) — what it may do on the
// datastore, each dataclass, each attribute and each exposed function. Judged by the same grants
// every request is judged by, never read from the file's text: what the matrix says is what the
// server does.

import { ADMIN_PRIVILEGE } from '../../../config/limits.js';
import { dataClassMethods, datastoreMethods, singletonEntries } from '../../../functions/catalog.js';
import type { Datastore } from '../../../datastore/index.js';
import type { Grants, Policy } from '../../../permissions/policy.js';

const DATA = ['read', 'create', 'update', 'drop'] as const;
type MatrixAction = (typeof DATA)[number] | 'execute';

export interface MatrixRow {
  readonly resource: string;
  readonly type: 'datastore' | 'dataclass' | 'attribute' | 'function';
  /** for each action: the columns (by name) that may */
  readonly allowed: Partial<Record<MatrixAction, string[]>>;
  /** a function's promote: the privileges it adds while it runs */
  readonly promote?: readonly string[];
}

export interface RolesMatrix {
  readonly open: boolean;
  readonly forceLogin: boolean;
  /** who the columns are: "guest", "role:<name>", "privilege:<name>" */
  readonly columns: readonly { readonly name: string; readonly kind: 'guest' | 'role' | 'privilege'; readonly privileges: readonly string[] }[];
  readonly rows: readonly MatrixRow[];
  /** the privilege that manages users and tokens */
  readonly adminPrivilege: string;
}

export function rolesMatrix(ds: Datastore, policy: Policy): RolesMatrix {
  const columns = [
    { name: 'guest', kind: 'guest' as const, privileges: [] as string[] },
    ...policy.roleList().map((r) => ({ name: `role:${r}`, kind: 'role' as const, privileges: policy.expand({ roles: [r] }) })),
    ...policy.privilegeList().map((p) => ({ name: `privilege:${p}`, kind: 'privilege' as const, privileges: policy.expand({ privileges: [p] }) })),
  ];
  const grants = columns.map((c) => ({ name: c.name, grants: policy.grantsFor(c.privileges) }));
  const who = (test: (g: Grants) => boolean) => grants.filter((g) => test(g.grants)).map((g) => g.name);
  const rows: MatrixRow[] = [];
  const fn = (resource: string) => {
    const promote = policy.promotes(resource);
    rows.push({ resource, type: 'function', allowed: { execute: who((g) => g.execute(resource)) }, ...(promote.length > 0 ? { promote } : {}) });
  };
  for (const m of datastoreMethods(ds)) fn(`ds.${m.name}`);
  for (const dc of ds.model.dataClasses.filter((d) => d.exposed)) {
    const allowed: MatrixRow['allowed'] = {};
    for (const a of [...DATA, 'execute'] as const) allowed[a] = who((g) => g.dataClass(dc.name, a));
    rows.push({ resource: dc.name, type: 'dataclass', allowed });
    for (const attr of dc.attributes.filter((x) => x.exposed !== false)) {
      const own: MatrixRow['allowed'] = {};
      for (const a of ['read', 'create', 'update'] as const) own[a] = who((g) => g.attribute(dc.name, attr.name, a));
      rows.push({ resource: `${dc.name}.${attr.name}`, type: 'attribute', allowed: own });
    }
    const klass = ds.dataClass(dc.name);
    if (klass) for (const m of dataClassMethods(klass)) fn(`${dc.name}.${m.name}`);
  }
  for (const s of singletonEntries(ds)) for (const m of s.methods) fn(`${s.name}.${m.name}`);
  return { open: policy.isOpen, forceLogin: policy.forceLogin, columns, rows, adminPrivilege: ADMIN_PRIVILEGE };
}
