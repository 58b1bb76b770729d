// A set's members as kept at rest, in as few bytes as their kind allows: integer keys that fit 32
// bits in an Int32Array (4 bytes a member), other numbers in a Float64Array (8), uuids as 4D
// writes them (32 uppercase hexadecimal digits) as their 16 bytes, any other text as UTF-8 bytes
// with the end of each key (its bytes + 4). A JavaScript string array costs 50 bytes or more a
// member; these are ArrayBuffers, counted by their byteLength: what a store accounts is what it holds.


/** A set's members in memory: numbers (integer or not) as a Float64Array, other keys as strings. */
export type KeyList = Float64Array | readonly string[];

export type PackedKeys =
  | { readonly kind: 'int32'; readonly data: Int32Array }
  | { readonly kind: 'float64'; readonly data: Float64Array }
  | { readonly kind: 'uuid'; readonly data: Buffer; readonly length: number }
  | { readonly kind: 'text'; readonly data: Buffer; readonly ends: Uint32Array };

const UUID = /^[0-9A-F]{32}$/;

export function pack(keys: KeyList): PackedKeys {
  if (keys instanceof Float64Array) {
    for (const k of keys) if (k !== (k | 0)) return { kind: 'float64', data: keys.slice() };
    return { kind: 'int32', data: Int32Array.from(keys) };
  }
  if (keys.every((k) => UUID.test(k))) return { kind: 'uuid', data: Buffer.from(keys.join(''), 'hex'), length: keys.length };
  const ends = new Uint32Array(keys.length);
  const parts = keys.map((k) => Buffer.from(k, 'utf8'));
  let at = 0;
  parts.forEach((p, i) => (ends[i] = at += p.length));
  return { kind: 'text', data: Buffer.concat(parts, at), ends };
}

export function packedLength(p: PackedKeys): number {
  return p.kind === 'uuid' ? p.length : p.kind === 'text' ? p.ends.length : p.data.length;
}

/** The bytes the members take. */
export function packedBytes(p: PackedKeys): number {
  return p.data.byteLength + (p.kind === 'text' ? p.ends.byteLength : 0);
}

/** Members [from, to) as a key list (integers as a Float64Array, text as strings): made on demand, a page's worth for a page. */
export function unpack(p: PackedKeys, from = 0, to = packedLength(p)): KeyList {
  const n = packedLength(p);
  const start = Math.min(Math.max(0, from), n);
  const end = Math.min(Math.max(start, to), n);
  switch (p.kind) {
    case 'int32':
      return Float64Array.from(p.data.subarray(start, end));
    case 'float64':
      return p.data.slice(start, end);
    case 'uuid': {
      // one hex string, cut in 32s (each a slice of it, not a copy)
      const hex = p.data.toString('hex', start * 16, end * 16).toUpperCase();
      return Array.from({ length: end - start }, (_, i) => hex.slice(i * 32, i * 32 + 32));
    }
    case 'text':
      return Array.from({ length: end - start }, (_, i) => p.data.toString('utf8', start + i === 0 ? 0 : p.ends[start + i - 1], p.ends[start + i]));
  }
}
