// The benchmark suite's data set (`npm run bench`): a shop of Items, each in one of CATEGORIES
// Categories (an N→1 relation, expanded by one scenario). Row n's values depend on n only, so every
// server, baseline and peer reads the same data, and the suite knows what each answer must hold.
//
// Sizes run from 10,000 to 10,000,000 items; the filters are chosen so that a page has the same
// cost at every size (a name prefix matches PREFIX_MATCHES items whatever the size), which is what
// "cost follows the page, not the table" is measured with.

export const ITEM = 'Item';
export const CATEGORY = 'Category';
/** categories, whatever the number of items */
export const CATEGORIES = 1000;
/** items a name prefix (prefixOf) matches, at every size of at least 1,000 items */
export const PREFIX_MATCHES = 100;
/** the digits of an item's number in its name: room for 100,000,000 items */
const DIGITS = 8;

export const MODEL = {
  name: 'Shop',
  dataClasses: [
    {
      name: CATEGORY,
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string', indexed: true },
        { name: 'rate', type: 'number' },
        { name: 'items', kind: 'relatedEntities', type: 'ItemSelection', path: 'category' },
      ],
    },
    {
      name: ITEM,
      collectionName: 'ItemSelection',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string', indexed: true },
        { name: 'price', type: 'number', indexed: true },
        { name: 'qty', type: 'long' },
        { name: 'created', type: 'date' },
        { name: 'category', kind: 'relatedEntity', type: CATEGORY, foreignKey: 'categoryID' },
      ],
    },
  ],
};

const WORDS = ['bolt', 'nut', 'washer', 'screw', 'hinge', 'bracket', 'spring', 'gear', 'valve', 'pulley'];

export interface ItemValues {
  name: string;
  price: number;
  qty: number;
  /** a date-time, as ISO text (what the server sends back) */
  created: string;
  /** the key of its category, 1 … CATEGORIES */
  categoryID: number;
}

/** The values of the n-th item (0-based); its key is n + 1. */
export function itemValues(n: number): ItemValues {
  return {
    name: `${WORDS[n % WORDS.length]}-${String(n).padStart(DIGITS, '0')}`,
    price: ((n * 7919) % 100_000) / 100,
    qty: (n * 31) % 1000,
    created: new Date(Date.UTC(2020, 0, 1) + n * 37_000).toISOString(),
    categoryID: ((n * 37) % CATEGORIES) + 1,
  };
}

export interface CategoryValues {
  name: string;
  rate: number;
}

/** The values of the n-th category (0-based); its key is n + 1. */
export function categoryValues(n: number): CategoryValues {
  return { name: `category ${String(n).padStart(4, '0')}`, rate: (n % 20) / 100 };
}

/**
 * A name prefix that PREFIX_MATCHES items have, for a random n in [0, rows): the word of item n and
 * its number's first DIGITS − 3 digits (1,000 consecutive numbers, one in ten of them with that word).
 */
export function prefixOf(n: number): string {
  const name = itemValues(n).name;
  const dash = name.indexOf('-');
  return name.slice(0, dash + 1 + DIGITS - 3);
}

/** The keys of the items whose name begins with `prefix`, in key order (what a filtered page must hold). */
export function keysWithPrefix(prefix: string, rows: number): number[] {
  const dash = prefix.indexOf('-');
  const word = WORDS.indexOf(prefix.slice(0, dash));
  const digits = prefix.slice(dash + 1);
  const from = Number(digits.padEnd(DIGITS, '0'));
  const to = Math.min(rows, Number(digits.padEnd(DIGITS, '9')) + 1);
  const keys: number[] = [];
  for (let n = from; n < to; n++) if (n % WORDS.length === word) keys.push(n + 1);
  return keys;
}
