// $method=update, validate and delete over HTTP on the demo: shapes, stamps, atomic batches,
// input values, refusals, and a crowd of clients updating one entity at once.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, TEST_ENGINE, type DemoFixture } from '../support/helpers.js';

describe('writes over HTTP', () => {
  let demo: DemoFixture;
  const post = (url: string, body: unknown) => demo.request(url, 'POST', body);
  const company = async (key: number) => (await demo.request(`/rest/Company(${key})`)).body;

  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('creates an entity and answers it as stored, with uri, __KEY, __STAMP 1 and aliases', async () => {
    const { status, body } = await post('/rest/Company?$method=update', { name: 'NewCo', companyCode: 'N-1', city: { __KEY: 2 }, founded: '2013-10-05T23:30:00Z' });
    assert.equal(status, 200);
    assert.equal(body.__entityModel, 'Company');
    assert.equal(body.__STAMP, 1);
    assert.match(body.uri, /^http:\/\/localhost(:\d+)?\/rest\/Company\(\d+\)$/);
    assert.equal(body.uri.endsWith(`/rest/Company(${body.__KEY})`), true);
    assert.equal(body.cityName, 'Lyon');
    assert.equal(body.founded, '5!10!2013'); // date-only: the time is dropped
  });

  it('keeps U+0000 inside an object on SQLite, and refuses it on PostgreSQL before it is stored (it could never be read back as text there)', async () => {
    const { status, body } = await post('/rest/Company?$method=update', { name: 'Nul Co', companyCode: 'NUL-1', extra: { note: 'a\u0000b', 'k\u0000': 1 } });
    if (TEST_ENGINE === 'postgres') {
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(body.__ERROR[0].errCode, 7013);
      assert.match(body.__ERROR[0].message, /U\+0000/);
      assert.equal((await demo.request('/rest/Company?$filter="companyCode=NUL-1"')).body.__COUNT, 0);
    } else {
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.extra.note, 'a\u0000b');
    }
    // the other objects stay readable through their properties either way
    assert.equal((await demo.request('/rest/Company?$filter="extra.rating > 0"&$top=1')).status, 200);
  });

  it('refuses, on both engines, text with a lone surrogate (in a text attribute, an object value or key), objects nested past 100 levels, and durations that are not whole milliseconds', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 101; i++) deep = { d: deep };
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['text', { name: 'Half \ud800 pair', companyCode: 'LS-1' }, /Company\.name \(string\).*lone surrogate/],
      ['object value', { name: 'LS', companyCode: 'LS-2', extra: { v: '\ud800' } }, /Company\.extra \(object\).*lone surrogate/],
      ['object key', { name: 'LS', companyCode: 'LS-3', extra: { '\udc00k': 1 } }, /lone surrogate/],
      ['deep object', { name: 'Deep', companyCode: 'LS-4', extra: deep }, /nest deeper than 100 levels/],
    ];
    for (const [what, entity, message] of cases) {
      const { status, body } = await post('/rest/Company?$method=update', entity);
      assert.equal(status, 400, `${what}: ${JSON.stringify(body)}`);
      assert.equal(body.__ERROR[0].errCode, 7013, what);
      assert.match(body.__ERROR[0].message, message, what);
    }
    assert.equal((await demo.request('/rest/Company?$filter="companyCode begin LS-"')).body.__COUNT, 0);
    // queries on the objects stay answerable (PostgreSQL refused every one once such a value was stored)
    assert.equal((await demo.request('/rest/Company?$filter="extra.sector = tech"&$top=1')).status, 200);
    assert.equal((await demo.request('/rest/Company/extra.rating?$compute=average')).status, 200);

    const staff = (await demo.request('/rest/Employee?$top=1&$attributes=dailyHours')).body.__ENTITIES[0];
    for (const dailyHours of [1.5, 1e19]) {
      const { status, body } = await post('/rest/Employee?$method=update', { __KEY: staff.__KEY, __STAMP: staff.__STAMP, dailyHours });
      assert.equal(status, 400, JSON.stringify(body));
      assert.match(body.__ERROR[0].message, /Employee\.dailyHours \(duration\).*milliseconds/);
    }
    // float arithmetic's noise is no fraction: 1.1 hours in milliseconds is stored whole
    const hours = await post('/rest/Employee?$method=update', { __KEY: staff.__KEY, __STAMP: staff.__STAMP, dailyHours: 1.1 * 3600000 });
    assert.equal(hours.status, 200, JSON.stringify(hours.body));
    assert.equal(hours.body.dailyHours, 3960000);
    const query = await demo.request('/rest/Employee?$filter="dailyHours = 1.5"');
    assert.equal(query.status, 400, JSON.stringify(query.body));
    assert.equal((await demo.request('/rest/Employee?$filter="dailyHours >= 28800000"&$top=1')).status, 200);
  });

  it('refuses a body nested 100,000 levels deep as read (400, 7013), never echoing it (which would overflow the stack: a 500)', async () => {
    const text = `{"name":"Deep","extra":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const { status, body } = await demo.request('/rest/Company?$method=update', 'POST', text, { 'content-type': 'application/json' });
    assert.equal(status, 400, JSON.stringify(body).slice(0, 300));
    assert.match(body.__ERROR[0].message, /nest deeper than 116 levels/);
  });

  it('shapes the answer with $attributes and $expand as reads do', async () => {
    const { body } = await post('/rest/Company?$method=update&$attributes=name,city.name', { name: 'Shaped', companyCode: 'S-1', city: { __KEY: 3 } });
    assert.deepEqual(Object.keys(body).filter((k) => !k.startsWith('__') && k !== 'uri'), ['name', 'city']);
    assert.equal(body.city.name, 'Berlin');
    const expanded = await post('/rest/Company?$method=update&$expand=city', { name: 'Expanded', companyCode: 'E-1', city: { __KEY: 3 } });
    assert.equal(expanded.body.city.name, 'Berlin');
    assert.ok('revenues' in expanded.body);
  });

  it('accepts a trailing slash, and a body sent as text/plain', async () => {
    const res = await demo.app.inject({ method: 'POST', url: '/rest/Company/?$method=update', payload: JSON.stringify({ name: 'Plain', companyCode: 'P-1' }), headers: { 'content-type': 'text/plain' } });
    assert.equal(res.statusCode, 200);
    assert.equal(JSON.parse(res.body).name, 'Plain');
  });

  it('reads a JSON body as JSON whatever its label (wakanda-client posts it as a form), and refuses one that is not JSON naming its label', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const saved = await demo.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: JSON.stringify({ name: 'Formed', companyCode: 'FORM-1' }), headers: form });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(JSON.parse(saved.body).name, 'Formed');
    const unlabelled = await demo.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: Buffer.from(JSON.stringify({ name: 'Unlabelled', companyCode: 'FORM-2' })) });
    assert.equal(unlabelled.statusCode, 200, unlabelled.body);
    const count = (await demo.request('/rest/Company?$filter="companyCode begin FORM"&$top=0')).body.__COUNT;
    const notJson = await demo.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: 'name=Formed&companyCode=FORM-3', headers: form });
    assert.equal(notJson.statusCode, 400);
    assert.equal(JSON.parse(notJson.body).__ERROR[0].errCode, 7014);
    assert.match(JSON.parse(notJson.body).__ERROR[0].message, /not valid JSON \(labelled "application\/x-www-form-urlencoded", read as JSON whatever the label\)/);
    assert.equal((await demo.request('/rest/Company?$filter="companyCode begin FORM"&$top=0')).body.__COUNT, count, 'nothing saved');
    // a browser's form from another site is still refused by the Origin check
    const crossSite = await demo.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: JSON.stringify({ name: 'Forged', companyCode: 'FORM-4' }), headers: { ...form, origin: 'http://evil.example' } });
    assert.equal(crossSite.statusCode, 403);
  });

  it('creates several entities and answers them in input order under __ENTITIES', async () => {
    const { status, body } = await post('/rest/City?$method=update', [{ name: 'Oslo', country: 'Norway' }, { name: 'Bergen', country: 'Norway' }]);
    assert.equal(status, 200);
    assert.deepEqual(body.__ENTITIES.map((e: { name: string }) => e.name), ['Oslo', 'Bergen']);
    assert.ok(body.__ENTITIES.every((e: Record<string, unknown>) => !('__entityModel' in e) && e.__STAMP === 1));
  });

  it('updates only the attributes given and increases the stamp and the global stamp', async () => {
    const before = await company(2);
    const global0 = (await demo.request('/rest/Company?$top=0')).body.__GlobalStamp;
    const { status, body } = await post('/rest/Company?$method=update', { __KEY: before.__KEY, __STAMP: before.__STAMP, revenues: 123 });
    assert.equal(status, 200);
    assert.equal(body.__STAMP, before.__STAMP + 1);
    assert.equal(body.revenues, 123);
    assert.equal(body.name, before.name);
    assert.ok((await demo.request('/rest/Company?$top=0')).body.__GlobalStamp > global0);
  });

  it('refuses a stale stamp: the current entity, __STATUS 2 and 1263, 1046, 1517, nothing saved', async () => {
    const current = await company(3);
    const { status, body } = await post('/rest/Company?$method=update', { __KEY: '3', __STAMP: current.__STAMP - 1 + 10, revenues: 1 });
    assert.equal(status, 409);
    assert.deepEqual(body.__STATUS, { status: 2, statusText: 'Stamp has changed', success: false });
    assert.deepEqual(body.__ERROR.map((e: { errCode: number }) => e.errCode), [1263, 1046, 1517]);
    assert.match(body.__ERROR[0].message, /record# 3 of table Company/);
    assert.equal(body.__STAMP, current.__STAMP);
    assert.equal(body.revenues, current.revenues);
    assert.equal((await company(3)).revenues, current.revenues);
  });

  it('answers an unknown key with 404 and 1542 naming the dataclass and key', async () => {
    const { status, body } = await post('/rest/Company?$method=update', { __KEY: 999, __STAMP: 1, name: 'x' });
    assert.equal(status, 404);
    assert.equal(body.__ERROR[0].errCode, 1542);
    assert.match(body.__ERROR[0].message, /"999" key in the "Company" dataclass/);
  });

  it('saves the others when one entity of a batch fails, without $atomic', async () => {
    const { status, body } = await post('/rest/City?$method=update', [{ name: 'Turin' }, { name: 'Bad', population: 'many' }, { name: 'Genoa' }]);
    assert.equal(status, 200);
    assert.equal(body.__ENTITIES[0].name, 'Turin');
    assert.match(body.__ENTITIES[1].__ERROR[0].message, /City\.population \(long64\) cannot take "many"/);
    assert.equal(body.__ENTITIES[2].name, 'Genoa');
    assert.equal((await demo.request('/rest/City?$filter=%22name%20in%20[turin,genoa]%22')).body.__COUNT, 2);
  });

  it('saves nothing with $atomic=true (or $atOnce) when one entity fails, stamps unchanged, and says which failed', async () => {
    for (const flag of ['$atomic=true', '$atOnce=true']) {
      const c1 = await company(4);
      const { status, body } = await post(`/rest/Company?$method=update&${flag}`, [
        { __KEY: c1.__KEY, __STAMP: c1.__STAMP, revenues: 777 },
        { name: 'Atomic', companyCode: 'C1000' }, // companyCode is unique and taken
      ]);
      assert.equal(status, 409, flag);
      assert.equal(body.__ENTITIES[0].__ERROR, undefined);
      assert.equal(body.__ENTITIES[0].__STAMP, c1.__STAMP, 'stamp unchanged');
      assert.match(body.__ENTITIES[1].__ERROR[0].message, /companyCode/);
      const after = await company(4);
      assert.equal(after.__STAMP, c1.__STAMP);
      assert.equal(after.revenues, c1.revenues);
    }
  });

  it('converts and checks input values: dd!mm!yyyy, booleans, ranges, uuids, objects, relations', async () => {
    const ok = await post('/rest/Employee?$method=update', {
      lastName: 'Input', birthDate: '05!10!2013', isManager: true, level: 7, skills: { main: 'x' }, employer: { __KEY: 1 }, manager: null,
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.birthDate, '5!10!2013');
    assert.match(ok.body.ID, /^[0-9A-F]{32}$/); // generated uuid key
    // years 0 to 99 are those years, not 1900 to 1999 (as Date.UTC would read them)
    const early = await post('/rest/Employee?$method=update', { lastName: 'Early', birthDate: '4!3!0099', hiredAt: '0099-03-04T10:00:00Z' });
    assert.equal(early.status, 200, JSON.stringify(early.body));
    assert.deepEqual([early.body.birthDate, early.body.hiredAt], ['4!3!99', '0099-03-04T10:00:00.000Z']);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ level: 300 }, /Employee\.level \(byte\) cannot take 300: out of range -128 to 127/],
      [{ extension: 1.5 }, /expected a whole number/],
      [{ isManager: 'yes' }, /expected true or false/],
      [{ ID: 'not-a-uuid' }, /not a valid uuid key|expected a uuid/],
      [{ birthDate: '31/12/2020' }, /expected a date/],
      [{ birthDate: '31!02!2020' }, /expected a date/],
      [{ hiredAt: '2020-02-31T00:00:00Z' }, /expected a date/],
      [{ employer: { __KEY: 999 } }, /Cannot find entity with "999" key in the "Company" dataclass/],
      [{ employer: 3 }, /takes \{"__KEY"/],
      [{ employerName: 'x' }, /alias attribute: it is read-only/],
      [{ fullName: 'x' }, /calculated attribute without a set function/],
      [{ __TIMESTAMP: '2020-01-01T00:00:00Z' }, /__TIMESTAMP is set by the server/],
      [{ lastNme: 'x' }, /"lastNme" attribute cannot be found.*did you mean 'lastName'/],
      [{ staff: [] }, /unknown|cannot be found|read-only/],
    ];
    for (const [input, message] of bad) {
      const { status, body } = await post('/rest/Employee?$method=update', { lastName: 'Bad', ...input });
      assert.ok(status >= 400 && status < 500, `${JSON.stringify(input)} → ${status}`);
      assert.match(body.__ERROR[0].message, message, JSON.stringify(input));
    }
    assert.equal((await demo.request('/rest/Employee?$filter=%22lastName%20=%20bad%22&$top=0')).body.__COUNT, 0, 'nothing half-saved');
  });

  it('refuses to leave a notNull attribute null, naming it', async () => {
    const created = await post('/rest/Company?$method=update', { companyCode: 'NN-1' });
    assert.equal(created.status, 400);
    assert.match(created.body.__ERROR[0].message, /Company\.name cannot be null/);
    const c = await company(7);
    const cleared = await post('/rest/Company?$method=update', { __KEY: c.__KEY, __STAMP: c.__STAMP, name: null });
    assert.equal(cleared.status, 400);
    assert.equal((await company(7)).name, c.name);
  });

  it('answers $method=validate with ok, or one error element per failing input, saving nothing', async () => {
    const ok = await post('/rest/City?$method=validate', [{ name: 'Valid' }]);
    assert.deepEqual(ok.body, { ok: true });
    const bad = await post('/rest/City?$method=validate', [{ name: 'Fine' }, { population: -1.5 }, { nmae: 'x' }]);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.__ENTITIES.length, 2);
    assert.equal((await demo.request('/rest/City?$filter=%22name%20in%20[valid,fine]%22&$top=0')).body.__COUNT, 0);
  });

  it('answers $method=validate of one object as an update of one object: ok, or its __ERROR at the top level (no __ENTITIES), the status of the failure', async () => {
    assert.deepEqual((await post('/rest/City?$method=validate', { name: 'Valid' })).body, { ok: true });
    const bad = await post('/rest/City?$method=validate', { population: -1.5 });
    assert.equal(bad.status, 400);
    assert.ok(!('__ENTITIES' in bad.body), JSON.stringify(bad.body));
    const update = await post('/rest/City?$method=update', { population: -1.5 });
    // the same errors as the update of that object, then 4D's closing 1534 for a new entity
    assert.deepEqual(bad.body.__ERROR.slice(0, update.body.__ERROR.length), update.body.__ERROR);
    assert.equal(bad.body.__ERROR.at(-1).errCode, 1534);
  });

  it('answers $refresh=true with the values applied and nothing saved', async () => {
    const c = await company(5);
    const { body } = await post('/rest/Company?$method=update&$refresh=true', { __KEY: c.__KEY, __STAMP: c.__STAMP, revenues: 42 });
    assert.equal(body.revenues, 42);
    assert.equal(body.__STAMP, c.__STAMP);
    assert.equal((await company(5)).revenues, c.revenues);
  });

  it('deletes by key ([key] form too), answers 404 with 1542 for an unknown key, and a relation to it reads null', async () => {
    const created = (await post('/rest/Company?$method=update', { name: 'Doomed', companyCode: 'D-1' })).body;
    const employee = (await post('/rest/Employee?$method=update', { lastName: 'Orphan', employer: { __KEY: created.__KEY } })).body;
    assert.deepEqual((await post(`/rest/Company[${created.__KEY}]?$method=delete`, undefined)).body, { ok: true });
    const again = await post(`/rest/Company(${created.__KEY})?$method=delete`, undefined);
    assert.equal(again.status, 404);
    assert.equal(again.body.__ERROR[0].errCode, 1542);
    assert.equal((await demo.request(`/rest/Employee(${employee.__KEY})`)).body.employer, null);
  });

  it('deletes every match of a $filter in one transaction, and needs a filter to delete many', async () => {
    await post('/rest/City?$method=update', [{ name: 'Gone1', country: 'Atlantis' }, { name: 'Gone2', country: 'Atlantis' }]);
    assert.deepEqual((await post('/rest/City?$filter=%22country%20=%20atlantis%22&$method=delete', undefined)).body, { ok: true });
    assert.equal((await demo.request('/rest/City?$filter=%22country%20=%20atlantis%22')).body.__COUNT, 0);
    const all = await post('/rest/City?$method=delete', undefined);
    assert.equal(all.status, 400);
    assert.match(all.body.__ERROR[0].message, /needs a \$filter/);
  });

  it('takes an empty body labelled JSON as no body (a delete)', async () => {
    const created = (await post('/rest/City?$method=update', { name: 'Empty' })).body;
    const res = await demo.app.inject({ method: 'POST', url: `/rest/City(${created.__KEY})?$method=delete`, headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('answers a malformed body with 400 and __ERROR', async () => {
    const res = await demo.app.inject({ method: 'POST', url: '/rest/City?$method=update', payload: '{"name": ', headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 400);
    assert.ok(JSON.parse(res.body).__ERROR[0].message);
    const empty = await post('/rest/City?$method=update', []);
    assert.equal(empty.status, 400);
    const scalar = await post('/rest/City?$method=update', [1]);
    assert.match(scalar.body.__ENTITIES[0].__ERROR[0].message, /entity #1 of the body is not a JSON object/);
    const half = await post('/rest/City?$method=update', { __KEY: 1, name: 'x' });
    assert.match(half.body.__ERROR[0].message, /needs both __KEY and __STAMP/);
  });

  it('lets exactly one of 50 clients with the same stamp win; the others get 1263 and no update is lost', async () => {
    const c = await company(6);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      post('/rest/Company?$method=update', { __KEY: c.__KEY, __STAMP: c.__STAMP, revenues: 1000 + i })));
    const winners = results.filter((r) => r.status === 200);
    assert.equal(winners.length, 1);
    for (const r of results.filter((x) => x.status !== 200)) assert.equal(r.body.__ERROR[0].errCode, 1263);
    const after = await company(6);
    assert.equal(after.__STAMP, c.__STAMP + 1);
    assert.equal(after.revenues, winners[0].body.revenues);
  });
});
