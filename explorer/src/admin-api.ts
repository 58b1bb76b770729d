// The administration's requests: the built-in users (/rest/$users), their API tokens
// (/rest/$tokens) and roles.json as a matrix (/rest/$roles), as the server's handlers answer them
// (src/rest/run/handlers/admin.ts, roles-matrix.ts). Only an administrator gets an answer: a
// session holding the matrix's adminPrivilege, or any session when the project has no roles.json.
// So reading $roles is also how the explorer learns whether to offer the administration at all.

import { HIDDEN, REST, rest } from './api';

export type MatrixAction = 'read' | 'create' | 'update' | 'drop' | 'execute';

export interface MatrixColumn {
  /** "guest", "role:<name>", "privilege:<name>" */
  readonly name: string;
  readonly kind: 'guest' | 'role' | 'privilege';
  /** what the column holds, its privileges' includes expanded */
  readonly privileges: readonly string[];
}

export interface MatrixRow {
  /** "ds.fn", "Note", "Note.secret", "Note.fn", "Tools.fn" */
  readonly resource: string;
  readonly type: 'datastore' | 'dataclass' | 'attribute' | 'function';
  /** for each action: the columns (by name) that may */
  readonly allowed: Partial<Record<MatrixAction, readonly string[]>>;
  /** a function's promote: the privileges it adds while it runs */
  readonly promote?: readonly string[];
}

export interface RolesMatrix {
  /** no roles.json: everything is allowed to everyone */
  readonly open: boolean;
  readonly forceLogin: boolean;
  readonly adminPrivilege: string;
  readonly columns: readonly MatrixColumn[];
  readonly rows: readonly MatrixRow[];
}

export interface UserInfo {
  readonly userName: string;
  readonly roles: readonly string[];
  readonly created: string;
  readonly passwordChanged: string;
}

export interface TokenInfo {
  readonly id: string;
  readonly name: string;
  readonly userName: string;
  readonly privileges: readonly string[];
  readonly created: string;
  readonly expires: string | null;
  readonly lastUsed: string | null;
}

/** A new token: its description and its secret, which no later answer holds. */
export interface NewToken extends TokenInfo {
  readonly token: string;
}

/** The matrix, when this session is an administrator; undefined otherwise (401, 403, anything else). */
/**
 * roles.json as a matrix when the session is an administrator (it holds the admin privilege, the
 * server's own rule), else undefined — asked only then: another session's 401 would be an error
 * line in the browser's console at every page.
 */
export async function probeAdministration(session: { readonly privileges: readonly string[] }): Promise<RolesMatrix | undefined> {
  if (!session.privileges.some((p) => p.toLowerCase() === 'admin')) return undefined;
  try {
    return await rest<RolesMatrix>(`${REST}/$roles`, { quiet: true });
  } catch {
    return undefined;
  }
}

export const readMatrix = (): Promise<RolesMatrix> => rest<RolesMatrix>(`${REST}/$roles`);

const userUrl = (name: string) => `${REST}/$users/${encodeURIComponent(name)}`;

export async function listUsers(): Promise<UserInfo[]> {
  return (await rest<{ users: UserInfo[] }>(`${REST}/$users`)).users;
}

export const addUser = (userName: string, password: string, roles: readonly string[]): Promise<UserInfo> =>
  rest<UserInfo>(`${REST}/$users`, { body: { userName, password, roles }, shownBody: { userName, password: HIDDEN, roles } });

export const changeUser = (userName: string, change: { password?: string; roles?: readonly string[] }): Promise<UserInfo> =>
  rest<UserInfo>(userUrl(userName), { body: change, shownBody: change.password === undefined ? undefined : { ...change, password: HIDDEN } });

export const removeUser = (userName: string): Promise<unknown> => rest(userUrl(userName), { method: 'DELETE' });

export async function listTokens(): Promise<TokenInfo[]> {
  return (await rest<{ tokens: TokenInfo[] }>(`${REST}/$tokens`)).tokens;
}

export const createToken = (request: { userName: string; name: string; privileges: readonly string[]; expires?: string | number }): Promise<NewToken> =>
  rest<NewToken>(`${REST}/$tokens`, { body: request });

export const revokeToken = (id: string): Promise<unknown> => rest(`${REST}/$tokens/${encodeURIComponent(id)}`, { method: 'DELETE' });

/** The roles a user may be given: the matrix's role columns. */
export function roleNames(matrix: RolesMatrix): string[] {
  return matrix.columns.filter((c) => c.kind === 'role').map((c) => c.name.slice('role:'.length));
}

/** The privileges roles give (their includes expanded), in the matrix's order of privileges. */
export function privilegesOf(matrix: RolesMatrix, roles: readonly string[]): string[] {
  const wanted = new Set(roles.map((r) => `role:${r}`.toLowerCase()));
  const held = new Set(matrix.columns.filter((c) => c.kind === 'role' && wanted.has(c.name.toLowerCase())).flatMap((c) => c.privileges));
  const order = matrix.columns.filter((c) => c.kind === 'privilege').map((c) => c.name.slice('privilege:'.length));
  return [...order.filter((p) => held.has(p)), ...[...held].filter((p) => !order.includes(p))];
}

/** An ISO time as the tables show it: local date and minutes (the full time in its title). */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
