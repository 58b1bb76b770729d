// Query plans kept per query shape (src/query/plan-cache.ts, issue 39): a $filter text sent again
// is not parsed again and its paths are not resolved again (the caches' counters say so, no
// timing), whatever values its placeholders are given — and the rows are those of the values;
// two sessions that see different rows (restrict()) or different attributes (roles.json) never
// get each other's rows from a shape they share; a query that fails is not kept and fails the same
// way again; and the parse cache stays bounded. On both engines (testDatabase through serve()).

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { parsedQueries, parseQuery } from '../../src/query/parser.js';
import { PLAN_CACHE_ENTRIES, PLAN_TEXT_LENGTH, planStats, resetPlanStats } from '../../src/query/plan-cache.js';
import { resolveValuePath } from '../../src/query/path.js';
import { EVERY_ATTRIBUTE } from '../../src/model/types.js';
import { coreOf } from '../../src/datastore/datastore.js';
import { client, rolesJson, serve, texts, type Served } from './roles-projects-shared.js';

const filter = (text: string, params: unknown[]): string => `$filter=${encodeURIComponent(JSON.stringify(text))}&$params=${encodeURIComponent(JSON.stringify(params))}`;

describe('query plans kept per shape', () => {
  let s: Served;
  let ann: ReturnType<typeof client>;
  let bob: ReturnType<typeof client>;
  let guest: ReturnType<typeof client>;
  before(async () => {
    // everyone reads the datastore; a note's ownerName only a signed-in User (privilege reader)
    s = await serve(rolesJson({}, [
      { applyTo: 'ds', type: 'datastore', read: ['guest'] },
      { applyTo: 'Note.ownerName', type: 'attribute', read: ['reader'] },
    ]));
    ann = client(s.app);
    bob = client(s.app);
    guest = client(s.app);
    for (const [c, name] of [[ann, 'ann'], [bob, 'bob']] as const) {
      const login = await c('/rest/$catalog/authentify', 'POST', [name]);
      assert.equal(login.status, 200, JSON.stringify(login.body));
    }
  });
  after(() => s.close());
  beforeEach(() => resetPlanStats());

  it('parses and resolves a shape once, and gives each request the rows of its own values', async () => {
    const text = 'text begin :1 and ID > :2';
    const first = await ann(`/rest/Note?${filter(text, ['ann', 0])}`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(texts(first.body), ['ann one', 'ann two']);
    const { parses, pathResolutions } = planStats;
    // (the first request parses restrict()'s own query too)
    assert.ok(parses >= 1 && parses <= 2, `parsed: ${parses}`);
    assert.ok(pathResolutions >= 2, `the paths of the shape are resolved once: ${pathResolutions}`);
    const again = await ann(`/rest/Note?${filter(text, ['ann t', 0])}`);
    assert.deepEqual(texts(again.body), ['ann two']);
    const none = await ann(`/rest/Note?${filter(text, ['ann', 1e9])}`);
    assert.deepEqual(texts(none.body), []);
    assert.equal(none.body.__COUNT, 0);
    assert.equal(planStats.parses, parses, 'the text is not parsed again');
    assert.equal(planStats.pathResolutions, pathResolutions, 'its paths are not resolved again');
    assert.ok(planStats.parseHits >= 2 && planStats.pathHits >= 4, JSON.stringify(planStats));
  });

  it('never gives a session the rows another session\'s restrict() lets it see, from a shape both use', async () => {
    const text = 'text begin :1';
    assert.deepEqual(texts((await ann(`/rest/Note?${filter(text, ['b'])}`)).body), []);
    const bobs = await bob(`/rest/Note?${filter(text, ['b'])}`);
    assert.deepEqual(texts(bobs.body), ['bob other', 'bob secret', 'bob third']);
    assert.equal(bobs.body.__COUNT, 3);
    const anns = await ann(`/rest/Note?${filter(text, ['ann'])}`);
    assert.deepEqual(texts(anns.body), ['ann one', 'ann two']);
    assert.equal(anns.body.__COUNT, 2);
    assert.deepEqual(texts((await bob(`/rest/Note?${filter(text, ['ann'])}`)).body), []);
    assert.deepEqual(texts((await guest(`/rest/Note?${filter(text, ['b'])}`)).body), [], 'a guest (user name \'\') owns no note');
    assert.ok(planStats.parses <= 1, `one shape for all of them: parsed ${planStats.parses} times`);
    // $compute over the same shape: each session's own rows
    assert.equal((await bob(`/rest/Note/ID?$compute=count&${filter(text, ['b'])}`)).body, 3);
    assert.equal((await ann(`/rest/Note/ID?$compute=count&${filter(text, ['b'])}`)).body, 0);
  });

  it('never lets a session query an attribute it may not read because another session could, in either order', async () => {
    const text = 'ownerName = :1';
    const anns = await ann(`/rest/Note?${filter(text, ['ann'])}`);
    assert.equal(anns.status, 200, JSON.stringify(anns.body));
    assert.deepEqual(texts(anns.body), ['ann one', 'ann two']);
    const refused = await guest(`/rest/Note?${filter(text, ['ann'])}`);
    assert.ok(refused.status >= 400 && refused.status < 500, `${refused.status} ${JSON.stringify(refused.body)}`);
    assert.ok(refused.body.__ERROR, JSON.stringify(refused.body));
    assert.equal(refused.body.__ENTITIES, undefined);
    // the other way round: the guest's failure is not what a reader gets
    const other = 'ownerName # :1';
    const refusedFirst = await guest(`/rest/Note?${filter(other, ['x'])}`);
    assert.ok(refusedFirst.status >= 400, JSON.stringify(refusedFirst.body));
    const bobs = await bob(`/rest/Note?${filter(other, ['x'])}`);
    assert.equal(bobs.status, 200, JSON.stringify(bobs.body));
    assert.deepEqual(texts(bobs.body), ['bob other', 'bob secret', 'bob third']);
    // and the guest is refused again, with the same error
    const refusedAgain = await guest(`/rest/Note?${filter(other, ['x'])}`);
    assert.deepEqual(refusedAgain, refusedFirst);
    // the value paths of computations: per visibility too
    assert.equal((await bob('/rest/Note/ownerName?$compute=count')).body, 3);
    const computeRefused = await guest('/rest/Note/ownerName?$compute=count');
    assert.ok(computeRefused.status >= 400 && computeRefused.body.__ERROR, JSON.stringify(computeRefused.body));
  });

  it('keeps no query that fails: the same text fails again with the same error', async () => {
    const bad = 'text = :1 and (';
    const a = await ann(`/rest/Note?${filter(bad, ['x'])}`);
    const b = await ann(`/rest/Note?${filter(bad, ['x'])}`);
    assert.equal(a.status, 400);
    assert.deepEqual(b, a);
    assert.equal(planStats.parses, 2, 'parsed (and refused) each time');
    const unknown = await ann(`/rest/Note?${filter('nothing = :1', ['x'])}`);
    assert.deepEqual(await ann(`/rest/Note?${filter('nothing = :1', ['x'])}`), unknown);
    assert.ok(unknown.status >= 400 && unknown.body.__ERROR);
  });
});

describe('the plan cache stays bounded', () => {
  it('keeps at most PLAN_CACHE_ENTRIES texts, the least recently used going first, and no text longer than PLAN_TEXT_LENGTH', () => {
    const hot = parseQuery('hot = 1');
    for (let i = 0; i < PLAN_CACHE_ENTRIES + 100; i++) {
      parseQuery(`a = ${i}`);
      // (used all along: it stays)
      if (i % 100 === 0) assert.equal(parseQuery('hot = 1'), hot);
    }
    assert.equal(parsedQueries(), PLAN_CACHE_ENTRIES);
    resetPlanStats();
    parseQuery('a = 0');
    assert.equal(planStats.parses, 1, 'the oldest text went');
    parseQuery(`a = ${PLAN_CACHE_ENTRIES + 99}`);
    assert.equal(planStats.parseHits, 1, 'a recent one stayed');
    const long = `a = '${'x'.repeat(PLAN_TEXT_LENGTH)}'`;
    assert.notEqual(parseQuery(long), parseQuery(long), 'a text that long is parsed each time');
  });

  it('keeps a computation\'s value path per dataclass and visibility, and not its failures', async () => {
    const s = await serve(rolesJson());
    try {
      const model = coreOf(s.ds).model.dataClassesByName.get('Note')!;
      resetPlanStats();
      const p = resolveValuePath(model, 'owner.name', EVERY_ATTRIBUTE);
      assert.equal(resolveValuePath(model, 'owner.name', EVERY_ATTRIBUTE), p);
      assert.deepEqual([planStats.valuePaths, planStats.valuePathHits], [1, 1]);
      const hidden = (a: { name: string }) => a.name !== 'owner';
      assert.throws(() => resolveValuePath(model, 'owner.name', hidden));
      assert.throws(() => resolveValuePath(model, 'owner.name', hidden));
      assert.equal(planStats.valuePaths, 3, 'a failure is walked again');
    } finally {
      await s.close();
    }
  });
});
