// Stored guest sessions (issue 34): capped per client address and in all, in the database (every
// instance counts every other's), the least recently used giving way — with its entity sets —
// rather than a newcomer being refused. The probe's flood: cookie-less
// GET /rest/City?$method=entityset&$top=1 from many addresses.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { coreOf } from '../../src/datastore/datastore.js';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { buildServer } from '../../src/http/server.js';
import { SESSION_TABLE } from '../../src/storage/system-tables/tables.js';
import { DEMO_DIR, type DemoFixture, tempDir, openDemo, openDemoProject, testDatabase } from '../support/helpers.js';

const ROLES = join(DEMO_DIR, 'roles.json');
const COOKIE = '4DSID_Demo';
type Answer = { status: number; body: any; cookie: string | undefined };

/** One request through inject, from `address`, with `cookie` (4DSID_Demo=…) when given. */
async function get(app: FastifyInstance, url: string, address: string, cookie?: string): Promise<Answer> {
  const res = await app.inject({ url, remoteAddress: address, headers: cookie ? { cookie } : {} });
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
  return { status: res.statusCode, body: JSON.parse(res.body), cookie: lines.find((l) => l.startsWith(`${COOKIE}=`))?.split(';')[0] };
}

/** A cookie-less client storing a set (the probe's request): its guest's cookie and set. */
async function newGuest(app: FastifyInstance, address: string): Promise<{ cookie: string; set: string }> {
  const res = await get(app, '/rest/City?$method=entityset&$top=1', address);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.ok(res.cookie, 'a stored guest gets its cookie');
  return { cookie: res.cookie, set: String(res.body.__ENTITYSET) };
}

async function storedGuests(ds: DatastoreWithClasses, address?: string): Promise<number> {
  const where = address === undefined ? '' : ` AND "address" = '${address}'`;
  return Number((await coreOf(ds).storage.get(`SELECT COUNT(*) AS n FROM "${SESSION_TABLE}" WHERE "guest" = 1${where}`))?.n);
}

/** The guest still has its session (its id as $info shows it) and its set. */
async function alive(app: FastifyInstance, guest: { cookie: string; set: string }, address: string): Promise<boolean> {
  const res = await get(app, `${guest.set}?$top=1`, address, guest.cookie);
  return res.status === 200;
}

describe('stored guests: capped per address, the least recently used giving way', () => {
  let demo: DemoFixture;
  let clock = Date.UTC(2031, 0, 1, 9, 0, 0);
  const tick = (ms = 1000) => (clock += ms);
  before(async () => {
    demo = await openDemo({ roles: ROLES, sessions: { now: () => clock, maxGuestSessions: 12, maxGuestsPerAddress: 4 } });
  });
  after(() => demo.close());

  it("keeps at most 4 guests of one address: the 5th and 6th make that address's least recently used give way (a guest used since stays), with their sets; nobody is refused", async () => {
    const at = '10.1.0.1';
    const guests: { cookie: string; set: string }[] = [];
    for (let i = 0; i < 4; i++) {
      tick();
      guests.push(await newGuest(demo.app, at));
    }
    assert.equal(await storedGuests(demo.ds, at), 4);
    // the first guest is used again a minute later (its last use is written): the second is now the least recently used
    tick(61_000);
    assert.equal(await alive(demo.app, guests[0], at), true);
    const setsBefore = (await coreOf(demo.ds).sets.list()).length;
    tick();
    guests.push(await newGuest(demo.app, at));
    tick();
    guests.push(await newGuest(demo.app, at));
    assert.equal(await storedGuests(demo.ds, at), 4);
    assert.deepEqual(await Promise.all(guests.map((g) => alive(demo.app, g, at))), [true, false, false, true, true, true]);
    // their sets went with them, not only out of reach
    assert.equal((await coreOf(demo.ds).sets.list()).length, setsBefore);
    // the evicted guest's cookie is a new guest's
    const back = await get(demo.app, '/rest/$info', at, guests[1].cookie);
    assert.ok(back.cookie && back.cookie !== guests[1].cookie);
  });

  it('past the cap of all guests (12), gives a newcomer from another address its set, the least recently used guest anywhere giving way — never 429', async () => {
    tick(3 * 3_600_000); // every earlier guest has expired
    const addresses = ['10.2.0.1', '10.2.0.2', '10.2.0.3'];
    const first: { cookie: string; set: string; at: string }[] = [];
    for (const at of addresses) {
      for (let i = 0; i < 4; i++) {
        tick();
        first.push({ ...(await newGuest(demo.app, at)), at });
      }
    }
    const newcomer = await get(demo.app, '/rest/City?$method=entityset&$top=1', '10.2.0.9');
    assert.equal(newcomer.status, 200, JSON.stringify(newcomer.body));
    const live = await Promise.all(first.map((g) => alive(demo.app, g, g.at)));
    assert.deepEqual(live, [false, ...Array(11).fill(true)], 'the oldest guest gave way');
  });
});

describe("stored guests: the probe's flood from 50 addresses", () => {
  let demo: DemoFixture;
  let clock = Date.UTC(2031, 0, 1, 9, 0, 0);
  before(async () => {
    // the defaults' proportions (10,000 in all, 100 an address) scaled down: 50 addresses hold half the pool at most
    demo = await openDemo({ roles: ROLES, sessions: { now: () => clock++, maxGuestSessions: 200, maxGuestsPerAddress: 2 } });
  });
  after(() => demo.close());

  it("leaves other guests their sets and gives a new guest anywhere its set afterwards (the flood once made every new guest 429)", async () => {
    const office = await newGuest(demo.app, '192.168.7.7');
    const answers: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (let a = 0; a < 50; a++) answers.push((await get(demo.app, '/rest/City?$method=entityset&$top=1', `10.50.0.${a + 1}`)).status);
    }
    assert.ok(answers.every((s) => s === 200), 'the flood itself is never refused');
    assert.equal(await storedGuests(demo.ds), 50 * 2 + 1, 'each flooding address keeps 2 guests');
    assert.equal(await alive(demo.app, office, '192.168.7.7'), true, "the office's guest keeps its set");
    const late = await get(demo.app, '/rest/City?$method=entityset&$top=1', '172.16.0.1');
    assert.equal(late.status, 200, JSON.stringify(late.body));
  });
});

describe('stored guests: the caps hold across two instances on one database', () => {
  let tmp: ReturnType<typeof tempDir>;
  const instances: { ds: DatastoreWithClasses; app: FastifyInstance }[] = [];
  let clock = Date.UTC(2031, 0, 1, 9, 0, 0);
  before(async () => {
    tmp = tempDir();
    const db = await testDatabase(join(tmp.dir, 'shared.sqlite'));
    for (let i = 0; i < 2; i++) {
      const ds = await openDemoProject({ db, roles: ROLES, poolSize: 4, sessions: { now: () => clock++, maxGuestSessions: 5, maxGuestsPerAddress: 3 } });
      instances.push({ ds, app: await buildServer(ds, { logLevel: 'silent' }) });
    }
  });
  after(async () => {
    for (const i of instances) {
      await i.app.close();
      await i.ds.close();
    }
    tmp.remove();
  });

  it('counts the guests each instance stored: 8 guests of one address through A and B leave 3, the last 3', async () => {
    const made: { cookie: string; set: string }[] = [];
    for (let i = 0; i < 8; i++) made.push(await newGuest(instances[i % 2].app, '10.3.0.1'));
    assert.equal(await storedGuests(instances[0].ds, '10.3.0.1'), 3);
    const live = await Promise.all(made.map((g, i) => alive(instances[(i + 1) % 2].app, g, '10.3.0.1')));
    assert.deepEqual(live, [false, false, false, false, false, true, true, true]);
  });

  it('keeps at most 5 guests in all, whichever instance stored them', async () => {
    for (let i = 0; i < 8; i++) await newGuest(instances[i % 2].app, `10.4.0.${i + 1}`);
    assert.equal(await storedGuests(instances[1].ds), 5);
  });
});
