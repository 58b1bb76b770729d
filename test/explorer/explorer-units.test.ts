// The Data Explorer's pure parts, without a browser (issue 38): CSV read as the server's export
// writes it, numbers in 4D's display formats (defaultFormat), a REST call as a curl command, and
// the query placeholder built from a dataclass.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

// (loaded by URL: the explorer's modules are written for its bundler, whose imports name no
// extension, and are typechecked by its own tsconfig — `tsc -p explorer` — not this one's)
const load = (name: string): Promise<any> => import(new URL(`../../explorer/src/${name}.ts`, import.meta.url).href);
const { curlOf } = await load('api');
const { exampleQuery, labelAttribute } = await load('catalog');
const { entitiesOfCsv, importInBatches, parseCsv } = await load('csv');
const { formatNumber } = await load('values');

type DataClassInfo = Record<string, unknown> & { name: string; attributes: (Record<string, unknown> & { name: string; kind: string; type: string })[] };

const city: DataClassInfo = {
  name: 'City', collectionName: 'CitySelection', dataURI: '/rest/City', key: [{ name: 'ID' }],
  attributes: [
    { name: 'ID', kind: 'storage', type: 'long', identifying: true },
    { name: 'name', kind: 'storage', type: 'string' },
    { name: 'population', kind: 'storage', type: 'long64' },
    { name: 'founded', kind: 'storage', type: 'date', simpleDate: true },
  ],
};
const person: DataClassInfo = {
  name: 'Person', collectionName: 'PersonSelection', dataURI: '/rest/Person', key: [{ name: 'ID' }], label: 'nick',
  attributes: [
    { name: 'ID', kind: 'storage', type: 'uuid', identifying: true },
    { name: 'first', kind: 'storage', type: 'string' },
    { name: 'nick', kind: 'storage', type: 'string' },
    { name: 'home', kind: 'relatedEntity', type: 'City' },
  ],
};
const catalog = { dataClasses: [city, person], methods: [], singletons: [], byName: (n: string) => [city, person].find((d) => d.name === n), target: (a: { type: string }) => [city, person].find((d) => d.name === a.type) };

describe('the explorer\'s CSV import', () => {
  it('reads RFC 4180: quoted fields with commas, doubled quotes and line breaks, CRLF or LF, a BOM, no empty last record', () => {
    assert.deepEqual(parseCsv('\uFEFFa,b\r\n"x, y","say ""hi"""\n"two\nlines",\r\n'), [['a', 'b'], ['x, y', 'say "hi"'], ['two\nlines', '']]);
  });

  it('makes each record an entity of the dataclass: numbers, ISO dates as 4D\'s d!m!yyyy, empty as null, the key unless new keys are asked for', () => {
    const text = 'ID,name,population,founded,unknown\r\n7,Oslo,700000,1048-05-01,x\r\n8,,,,\r\n';
    assert.deepEqual(entitiesOfCsv(city, text, false), { entities: [{ ID: 7, name: 'Oslo', population: 700000, founded: '1!5!1048' }, { ID: 8, name: null, population: null, founded: null }], skipped: ['unknown'], lines: [2, 3] });
    assert.deepEqual(entitiesOfCsv(city, text, true).entities[0], { name: 'Oslo', population: 700000, founded: '1!5!1048' });
    assert.throws(() => entitiesOfCsv(city, 'population\r\nmany\r\n', true), /line 2: population: "many" is not a number/);
  });

  it('numbers a record by its line in the file, blank lines counted', () => {
    const { entities, lines } = entitiesOfCsv(city, 'ID,name\r\n1,a\r\n\r\n2,b\r\n', false);
    assert.equal(entities.length, 2);
    assert.deepEqual(lines, [2, 4]);
    assert.throws(() => entitiesOfCsv(city, 'population\r\n1\r\n\r\nmany\r\n', true), /line 4: population: "many" is not a number/);
  });

  it('keeps the count of what the batches before saved when one fails as a whole (a 429, a 401): nothing sent after it', async () => {
    const entities = Array.from({ length: 5 }, (_, i) => ({ name: `c${i}` }));
    const sent: number[] = [];
    let calls = 0;
    const outcome = await importInBatches(entities, [2, 3, 4, 5, 6], 2, async (batch: unknown[]) => {
      sent.push(batch.length);
      if (++calls === 2) throw new Error('too many requests');
      return batch.map((e, j) => (j === 1 ? { __ERROR: [{ message: 'refused' }] } : e));
    }, (e: Error) => e.message);
    assert.deepEqual(sent, [2, 2], 'the third batch is not sent');
    assert.deepEqual(outcome, { created: 1, refused: 1, messages: ['line 3: refused'], stopped: 'stopped at line 4, nothing sent from there: too many requests' });
  });
});

describe('the explorer\'s display of defaultFormat', () => {
  const cases: [number, string, string | undefined][] = [
    [41800000, '$###,###,###', '$41,800,000'],
    [52000.5, '$###,###.00', '$52,000.50'],
    [3.14159, '#0.##', '3.14'],
    [-1234.5, '###,##0.00;(###,##0.00)', '(1,234.50)'],
    [-5, '$###', '-$5'],
    [12, '### kg', '12 kg'],
    [12, 'Internal date short', undefined],
    // past Intl's bounds (which throw): capped, the grid still drawn
    [7, '0'.repeat(30), '0'.repeat(20) + '7'],
    [1.5, `#.${'0'.repeat(150)}`, `1.5${'0'.repeat(19)}`],
  ];
  for (const [value, pattern, expected] of cases) {
    it(`writes ${value} in "${pattern}" as ${expected ?? 'itself (no number format)'}`, () => {
      assert.equal(formatNumber(value, pattern), expected);
    });
  }
});

describe('the explorer\'s curl commands', () => {
  it('quotes for a shell what it sends: the method, the headers but the default accept, a JSON body with quotes, the URL taken as it is (-g)', () => {
    const curl = curlOf({ method: 'POST', url: "http://h/rest/City?$filter=%22name%20%3D%20'A%40'%22", headers: { accept: 'application/json', 'content-type': 'application/json' }, body: '[{"name":"O\'Leary"}]' });
    assert.equal(curl, `curl -X POST -H 'content-type: application/json' --data-binary '[{"name":"O'\\''Leary"}]' -g 'http://h/rest/City?$filter=%22name%20%3D%20'\\''A%40'\\''%22'`);
    // the shell gives curl the texts back as they were
    const echoed = execFileSync('sh', ['-c', curl.replace(/^curl /, 'printf "%s\\n" ')], { encoding: 'utf8' }).split('\n');
    assert.deepEqual(echoed.slice(0, 8), ['-X', 'POST', '-H', 'content-type: application/json', '--data-binary', '[{"name":"O\'Leary"}]', '-g', "http://h/rest/City?$filter=%22name%20%3D%20'A%40'%22"]);
  });
});

describe('the explorer\'s curl commands for a large body', () => {
  it('reads a body past the limit from a file rather than writing it into the command', () => {
    const body = JSON.stringify([{ name: 'x'.repeat(100) }]);
    assert.equal(curlOf({ method: 'POST', url: 'http://h/rest/City', headers: {}, body }, 50), "curl -X POST --data-binary @body.json -g 'http://h/rest/City'");
    assert.match(curlOf({ method: 'POST', url: 'http://h/rest/City', headers: {}, body }, 500), /--data-binary '\[/);
  });
});

describe('the explorer\'s curl commands for a live feed', () => {
  it('asks curl not to buffer a stream (-N)', () => {
    assert.equal(curlOf({ method: 'GET', url: 'http://h/rest/Item?$method=watch', headers: { accept: 'text/event-stream' } }), "curl -N -H 'accept: text/event-stream' -g 'http://h/rest/Item?$method=watch'");
  });
});

describe('the explorer\'s labels and placeholder', () => {
  it('labels an entity by the model\'s label, else its first text attribute but the key', () => {
    assert.equal(labelAttribute(person)?.name, 'nick');
    assert.equal(labelAttribute(city)?.name, 'name');
  });

  it('builds the query placeholder from the dataclass: a number compared, a text through an N→1 relation, else its own', () => {
    assert.equal(exampleQuery(city, catalog), 'population > 100 and name = a@');
    assert.equal(exampleQuery(person, catalog), 'home.name = a@');
  });

  it('matches with @ only a text, and compares a key with 0 only when it is a number: the server refuses `= a@` on a date, `> 0` on a UUID', () => {
    const town = { ...city, label: 'population' };
    const badge = { ...person, label: 'since', attributes: [...person.attributes, { name: 'since', kind: 'storage', type: 'date' }] };
    const both = { ...catalog, byName: (n: string) => [town, badge].find((d) => d.name === n), target: (a: { type: string }) => [town, badge].find((d) => d.name === a.type) };
    assert.equal(exampleQuery(town, both), 'population > 100');
    assert.equal(exampleQuery(badge, both), '');
  });
});
