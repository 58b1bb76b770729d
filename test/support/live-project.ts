// The project the live-data tests (watch streams, webhooks) share: a tracked Item whose cost only
// the books privilege reads, and an untracked Plain; everything else open to a guest.

export const LIVE_MODEL = {
  name: 'Live',
  dataClasses: [
    { name: 'Item', trackChanges: true, attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }, { name: 'price', type: 'number' }, { name: 'cost', type: 'number' }] },
    { name: 'Plain', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }] },
  ],
};

/** a guest may do anything but read Item.cost */
export const LIVE_ROLES = {
  privileges: [{ privilege: 'books', includes: [] }],
  roles: [],
  permissions: {
    allowed: [
      { applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['guest'], update: ['guest'], drop: ['guest'], execute: ['guest'] },
      { applyTo: 'Item.cost', type: 'attribute', read: ['books'] },
    ],
  },
  restrictedByDefault: false,
  forceLogin: false,
};
