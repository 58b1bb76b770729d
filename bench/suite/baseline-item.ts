// An Item of the suite's shop model (model.ts) as our server writes it, for the hand-written
// baselines (baseline-reads.ts, baseline-writes.ts): the same keys in the same order.

/** An Item's row as the baselines select it. */
export interface ItemRow {
  ID: number;
  name: string | null;
  price: number | null;
  qty: number | null;
  created: string | null;
  categoryID: number | null;
  __stamp: number;
  __timestamp: number;
}

/** The Item's JSON object (top: an entity alone, with __entityModel); `category` is its category's key where that exists, else null. */
export function itemJson(r: ItemRow, top: boolean, category: number | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (top) out.__entityModel = 'Item';
  out.__KEY = String(r.ID);
  out.__TIMESTAMP = new Date(r.__timestamp).toISOString();
  out.__STAMP = r.__stamp;
  out.ID = r.ID;
  out.name = r.name;
  out.price = r.price;
  out.qty = r.qty;
  out.created = r.created;
  out.category = category === null ? null : { __deferred: { uri: `/rest/Category(${category})`, __KEY: String(category) } };
  out.categoryID = r.categoryID;
  return out;
}
