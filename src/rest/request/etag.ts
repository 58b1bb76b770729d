// Entity tags and conditional requests (issue 17; docs/decisions.md "ETags"). A tag says which
// state of the data an answer shows and to whom, without hashing the answer:
//   - an entity: its __STAMP, and the global stamp when what it shows reaches past its own row
//     (a relation, an alias, a calculated value: any change elsewhere may change it);
//   - a page of a collection: the global stamp (the datastore's modification counter, read by the
//     page's own statement), weak;
//   - both: a view, naming what the caller is shown (the projection's attributes as its grants let
//     it see them, its privileges and user name; and, when user code decides what is shown — a
//     restrict() filters rows, or a calculated attribute is shown — its session as it stands: its
//     id once stored, and a digest of its storage, which that code may read). Two callers who see
//     different things for one URL never share a tag; a guest without a kept session still gets
//     the same tag twice, and a session whose storage changed gets a new one.
// A calculated attribute is taken to depend on the data and the session (not on the time of day).

import { createHash } from 'node:crypto';
import { DatasetError } from '../../errors/dataset-error.js';
import { type Projection, type Session, sessionInternals } from '../../datastore/index.js';
import type { Scope } from '../scope/scope.js';

/** The attributes of a projection as text, made once per projection object (projections are cached). */
const shapes = new WeakMap<Projection, string>();

function shapeOf(p: Projection): string {
  let s = shapes.get(p);
  if (s === undefined) {
    s = p.attributes.map((a) => (a.kind === 'entity' || a.kind === 'entities' ? `${a.attr.name}:${a.kind}(${shapeOf(a.sub)})` : `${a.attr.name}:${a.kind}`)).join(',');
    shapes.set(p, s);
  }
  return s;
}

/** Whether a projection shows a calculated value, at any depth: user code that may read the session. */
const computing = new WeakMap<Projection, boolean>();

function computes(p: Projection): boolean {
  let c = computing.get(p);
  if (c === undefined) {
    c = p.attributes.some((a) => (a.kind === 'value' && a.attr.kind === 'calculated') || ((a.kind === 'entity' || a.kind === 'entities') && computes(a.sub)));
    computing.set(p, c);
  }
  return c;
}

/** The session as user code may see it: its id once stored (a guest that keeps nothing is a new session at every request) and its storage. */
function sessionState(session: Session): string {
  const storage = sessionInternals.storedStorage(session);
  return `${sessionInternals.stored(session) ? sessionInternals.id(session) : ''}:${storage === '{}' ? '' : hash32(storage)}`;
}

/** The digests made per projection, by who is shown it (a hash costs more than the read of an entity by key: they are kept). */
const views = new WeakMap<Projection, Map<string, string>>();
/** Callers kept per projection: past it, the map starts again (sessions named for a restrict() come and go). */
const VIEWS_PER_PROJECTION = 256;

/** What `scope`'s caller is shown through `projection`, as a short digest. */
export function viewTag(scope: Scope, projection: Projection): string {
  const { access, session } = scope;
  const privileges = access.grants.privileges;
  const who = `${privileges.length === 0 ? '' : privileges.join(',')}|${session.userName}|${access.restrict || computes(projection) ? sessionState(session) : ''}`;
  let byWho = views.get(projection);
  if (!byWho) views.set(projection, (byWho = new Map()));
  let tag = byWho.get(who);
  if (tag === undefined) {
    if (byWho.size >= VIEWS_PER_PROJECTION) byWho.clear();
    tag = createHash('sha1').update(`${projection.dataClass.name}|${shapeOf(projection)}|${who}`).digest('base64url').slice(0, 12);
    byWho.set(who, tag);
  }
  return tag;
}

/**
 * An entity's tag: its stamp first (If-Match reads it back); then which entity and which life of
 * it (its key and last save time: a read by a unique attribute may reach another entity at the
 * same stamp, and a key deleted and created again starts at stamp 1 again); the global stamp when
 * its answer reaches past its row; the view.
 */
export function entityTag(stamp: number, key: unknown, timestamp: number, globalStamp: number | undefined, view: string): string {
  const which = entityIdentity(key, timestamp);
  return globalStamp === undefined ? `"${stamp}-${which}-${view}"` : `"${stamp}-${which}-g${globalStamp}-${view}"`;
}

/** Which entity and which life of it, as its tag names them (the part after the stamp): its last save time and a digest of its key. */
export function entityIdentity(key: unknown, timestamp: number): string {
  return `${Math.max(0, Math.trunc(timestamp)).toString(36)}${hash32(String(key))}`;
}

/** FNV-1a of a text, in base 36: short, and the same on every instance. */
function hash32(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

/** Whether an entity's answer through `p` shows more than its own row (then its tag takes the global stamp): relations, calculated values, aliases. */
export function reachesPastRow(p: Projection): boolean {
  return p.related || p.attributes.some((a) => a.kind === 'value' && a.attr.kind !== 'storage');
}

/** A page's tag: weak (the same state shown again, not promised byte for byte across versions of the server). */
export function collectionTag(globalStamp: number, view: string): string {
  return `W/"g${globalStamp}-${view}"`;
}

/**
 * A strong tag names one representation (RFC 9110 §8.8.3): a body sent compressed carries its
 * tag with the encoding after a `+` (conventions.ts adds it), `"…+br"`, `"…+gzip"`. Preconditions
 * read a tag with or without it as the same version of the entity.
 */
const ENCODED = /\+(?:br|gzip)"$/;

/** A tag without the encoding its compressed body added. */
function unencoded(tag: string): string {
  return ENCODED.test(tag) ? `${tag.slice(0, tag.lastIndexOf('+'))}"` : tag;
}

/** The tag a compressed body carries. */
export function encodedTag(tag: string, encoding: string): string {
  return tag.startsWith('"') && tag.endsWith('"') && !ENCODED.test(tag) ? `${tag.slice(0, -1)}+${encoding}"` : tag;
}

/**
 * If-None-Match against the answer's tag: weak comparison (RFC 9110 §13.1.2), a list, or `*`.
 * Whether the client holds this version of it (in any encoding, however it wrote the tag: the
 * 304 then carries the tag a 200 would, §15.4.5 — the answer's own, its encoding added by
 * conventions.ts as for the 200, never the client's `W/` form of a strong tag).
 */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = tag.startsWith('W/') ? tag.slice(2) : tag;
  for (const item of header.split(',')) {
    const t = item.trim();
    if (unencoded(t.startsWith('W/') ? t.slice(2) : t) === opaque) return true;
  }
  return false;
}

/**
 * The encoding an answer is compressed with for an Accept-Encoding, among br and gzip (RFC 9110
 * §12.5.3): a coding named with q=0 is refused, `*` stands for the codings not named, x-gzip is
 * gzip; the highest q above 0 wins, br on a tie; none (identity) when neither is acceptable.
 * conventions.ts rewrites the request's header to this choice before @fastify/compress reads it
 * (whose own `*` handling would send gzip to `gzip;q=0, *`), and a 304 carries the tag the 200
 * would have had by it.
 */
export function negotiatedEncoding(header: string | string[] | undefined): 'br' | 'gzip' | undefined {
  if (header === undefined) return undefined;
  const named = new Map<string, number>();
  let star: number | undefined;
  for (const range of (Array.isArray(header) ? header.join(',') : header).toLowerCase().split(',')) {
    const [rawName, ...params] = range.split(';').map((p) => p.trim());
    if (rawName === '') continue;
    const name = rawName === 'x-gzip' ? 'gzip' : rawName;
    const qParam = params.find((p) => /^q\s*=/.test(p));
    const q = qParam === undefined ? 1 : Number.parseFloat(qParam.slice(qParam.indexOf('=') + 1)) || 0;
    if (name === '*') star = Math.max(star ?? 0, q);
    else named.set(name, Math.max(named.get(name) ?? 0, q));
  }
  let best: 'br' | 'gzip' | undefined;
  let bestQ = 0;
  for (const coding of ['br', 'gzip'] as const) {
    const q = named.get(coding) ?? star ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}

/**
 * What an update's or a delete's If-Match names (RFC 9110 §13.1.1): `*` (the entity exists,
 * whatever its version); a tag this server gave for the entity, read as its stamp and its
 * identity (which entity, which life of it: entityIdentity), both of which must be the entity's
 * now — the view and the global stamp after them say how it was shown, not which version it is,
 * and the encoding a compressed body added is the same version; or a bare stamp in quotes,
 * `"12"`, which says no more than a body's __STAMP and is checked as one. A weak tag is refused:
 * If-Match compares strongly, and only pages carry weak tags.
 */
export type IfMatch = '*' | { readonly stamp: number; readonly identity?: string };

export function readIfMatch(header: string): IfMatch {
  const value = header.trim();
  if (value === '*') return '*';
  const m = /^"(\d{1,15})(?:-([A-Za-z0-9_]+)(?:-[A-Za-z0-9_-]+)?)?(?:\+(?:br|gzip))?"$/.exec(value);
  if (!m) {
    const why = value.startsWith('W/') ? 'a weak tag (a page\'s) cannot name the version of an entity' : value.includes(',') ? 'it names one tag, not a list' : 'it takes the ETag of the entity as read (or "*")';
    throw new DatasetError('INVALID_HEADER', `If-Match ${JSON.stringify(value.slice(0, 100))} cannot be used: ${why}`);
  }
  return m[2] === undefined ? { stamp: Number(m[1]) } : { stamp: Number(m[1]), identity: m[2] };
}

/** Whether an If-Match's tag names this entity in this life (its stamp is checked apart, as a __STAMP is). */
export function ifMatchIdentityHolds(ifMatch: IfMatch, key: unknown, timestamp: number): boolean {
  return ifMatch === '*' || ifMatch.identity === undefined || ifMatch.identity === entityIdentity(key, timestamp);
}
