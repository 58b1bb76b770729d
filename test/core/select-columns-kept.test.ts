// The select list a page's SELECT reads, kept per columns list (sql/compiler/selects.ts, issue 39):
// the kept text is what compiling the list writes, per dialect and table alias, and a list with a
// column that binds a value or names another table is compiled with its statement every time.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildModel } from '../../src/model/load-model.js';
import type { ColumnSpec, SelectSpec } from '../../src/query/plan.js';
import { directPath } from '../../src/query/plan.js';
import { compileSelect } from '../../src/sql/compiler/statements.js';
import { sqliteDialect } from '../../src/sql/dialect-sqlite.js';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import type { StorageAttribute } from '../../src/model/types.js';

const model = buildModel({
  name: 'Kept',
  dataClasses: [
    { name: 'Owner', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }] },
    {
      name: 'Item',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'owner', kind: 'relatedEntity', type: 'Owner', foreignKey: 'ownerID' },
      ],
    },
  ],
});
const item = model.dataClassesByName.get('Item')!;
const name = item.attributesByName.get('name') as StorageAttribute;
const plain: ColumnSpec[] = [{ kind: 'storage', attr: item.key }, { kind: 'storage', attr: name }, { kind: 'stamp' }, { kind: 'timestamp' }, { kind: 'globalStamp' }, { kind: 'dataVersion' }];
const spec = (columns: readonly ColumnSpec[], value: string): SelectSpec => ({
  dataClass: item, columns, where: { kind: 'compare', path: directPath(name), op: '=', value }, order: [{ path: directPath(item.key), descending: false }], limit: 10, offset: 5,
});

describe('the select list kept per columns list', () => {
  for (const d of [sqliteDialect, postgresDialect]) {
    it(`writes what compiling the list writes, whatever the values bound (${d.name ?? 'dialect'})`, () => {
      const first = compileSelect(d, spec(plain, 'a'), null);
      const kept = compileSelect(d, spec(plain, 'b'), null);
      const fresh = compileSelect(d, spec([...plain], 'b'), null);
      assert.equal(kept.sql, first.sql);
      assert.equal(kept.sql, fresh.sql);
      assert.deepEqual(kept.params, fresh.params);
      assert.deepEqual(kept.params.slice(0, 1), ['b']);
    });
  }

  it('keeps each dialect\'s own text for one list', () => {
    const a = compileSelect(sqliteDialect, spec(plain, 'x'), null).sql;
    const b = compileSelect(postgresDialect, spec(plain, 'x'), null).sql;
    assert.notEqual(a, b);
    assert.equal(compileSelect(sqliteDialect, spec(plain, 'x'), null).sql, a);
    assert.equal(compileSelect(postgresDialect, spec(plain, 'x'), null).sql, b);
  });

  it('compiles a list with a joined column, a related key or a total with its statement', () => {
    const owner = item.attributesByName.get('owner') as never;
    const mixed: ColumnSpec[] = [...plain, { kind: 'relatedKey', via: [owner] }, { kind: 'total' }];
    const a = compileSelect(sqliteDialect, spec(mixed, 'p'), null);
    const b = compileSelect(sqliteDialect, spec(mixed, 'q'), null);
    assert.equal(a.sql, b.sql);
    // the total's subquery binds the condition's value too: in order, before the page's own
    assert.deepEqual(b.params, ['q', 'q', 10, 5]);
    assert.match(a.sql, /COUNT\(\*\)/);
  });
});
