// Attack cases on the guards in front of the data: cross-site requests (an Origin, and — issue
// 34 — a Sec-Fetch-Site or a Referer without one; a logout over GET), the Host check (DNS
// rebinding), sets named in $otherCollection, functions (issue 19: an entity parameter's stale
// __STAMP, the demo's test helpers; issue 34: parameters of the wrong type), uploads nobody
// attaches (issue 19), and the image conversion queue (issue 34).

import sharp from 'sharp';
import {
  createMany, deleteWhere, errCode, seconds, setId, sleep, statusOf, Verdict, type AttackCase, type Client,
} from './harness.js';
import { setValue } from './time.js';

const FOREIGN = 'http://evil.example';

const crossSite: AttackCase = {
  id: 'cross-site-writes',
  issue: 34,
  finding: 'a write without Origin passed even with `Sec-Fetch-Site: cross-site` or a foreign Referer (an Origin of another site was refused)',
  target: 'refused (403, 7046) with a foreign Origin, Sec-Fetch-Site: cross-site, or a foreign Referer; nothing written; same-origin writes go on',
  async run(ctx) {
    const v = new Verdict();
    const tag = `Csrf ${Date.now()}`;
    const tries: readonly [string, Record<string, string>][] = [
      ['Origin: evil.example', { origin: FOREIGN }],
      ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['Referer: evil.example', { referer: `${FOREIGN}/page.html` }],
    ];
    const parts: string[] = [];
    for (const [what, headers] of tries) {
      const a = await ctx.alice.post('/City?$method=update', { name: `${tag} ${what}` }, { headers });
      parts.push(`${what}: ${statusOf(a)}`);
      v.check(a.status === 403 && errCode(a) === 7046, `${what} answered ${statusOf(a)}`);
    }
    const written = Number((await ctx.alice.get(`/City?$filter=${encodeURIComponent(`"name = '${tag}@'"`)}&$top=0`)).json?.__COUNT);
    v.check(written === 0, `${written} written`);
    const own = await ctx.alice.post('/City?$method=update', { name: `${tag} own` }, { headers: { 'sec-fetch-site': 'same-origin', origin: ctx.server.origin, referer: `${ctx.server.origin}/$explorer` } });
    v.check(own.status === 200, `a same-origin write answered ${statusOf(own)}`);
    await deleteWhere(ctx.alice, 'City', `name = '${tag}@'`);
    return v.result(`${parts.join(', ')}; ${written} written; same-origin: ${statusOf(own)}`);
  },
};

const getLogout: AttackCase = {
  id: 'get-logout',
  issue: 34,
  finding: '`GET /rest/$directory/logout` logged out over GET: any site could log a user out',
  target: 'a state change over GET that is not 4D\'s protocol refuses cross-site requests (Sec-Fetch-Site, Referer): the session stays logged in',
  async run(ctx) {
    const v = new Verdict();
    const alice = ctx.client('alice (logout)');
    await alice.login('alice', 'alice123');
    const parts: string[] = [];
    for (const [what, headers] of [['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }], ['Referer: evil.example', { referer: `${FOREIGN}/` }]] as const) {
      const a = await alice.get('/$directory/logout', { headers });
      const who = (await alice.get('/$info')).json?.session?.userName;
      parts.push(`${what}: ${statusOf(a)}, then $info says '${who}'`);
      v.check(a.status === 403 && who === 'alice', `${what} answered ${statusOf(a)} and left the session '${who}'`);
    }
    const own = await alice.get('/$directory/logout', { headers: { 'sec-fetch-site': 'same-origin' } });
    const after = (await alice.get('/$info')).json?.session?.userName;
    v.check(own.status === 200 && after === '', `a same-origin logout answered ${statusOf(own)}, then '${after}'`);
    return v.result(`${parts.join('; ')}; same-origin: ${statusOf(own)}, then '${after}'`);
  },
};

const hostCheck: AttackCase = {
  id: 'host-check',
  issue: 34,
  finding: 'DNS rebinding: a page whose name points at 127.0.0.1 calling the API under its own name (held in the second probe)',
  target: 'a Host the server does not answer for: 421 (7045); its own names served',
  async run(ctx) {
    const v = new Verdict();
    const guest = ctx.client('guest');
    const foreign = await guest.get('/$catalog', { headers: { host: 'evil.example' } });
    const rebound = await guest.get('/Employee?$top=1', { headers: { host: `attacker.example:${ctx.server.port}` } });
    const own = await guest.get('/$catalog', { headers: { host: `localhost:${ctx.server.port}` } });
    v.check(foreign.status === 421 && errCode(foreign) === 7045, `Host: evil.example answered ${statusOf(foreign)}`);
    v.check(rebound.status === 421, `Host: attacker.example answered ${statusOf(rebound)}`);
    v.check(own.status === 200, `Host: localhost answered ${statusOf(own)}`);
    return v.result(`evil.example: ${statusOf(foreign)}, attacker.example:${ctx.server.port}: ${statusOf(rebound)}, localhost: ${statusOf(own)}`);
  },
};

const otherCollection: AttackCase = {
  id: 'other-collection',
  issue: 34,
  finding: '`$otherCollection=<an unknown id, or another session\'s set>` answered 200 as if empty',
  target: '404 (1802), as a direct read of that set answers',
  async run(ctx) {
    const v = new Verdict();
    const guest = ctx.client('guest');
    const mine = setId(await guest.get('/Employee?$method=entityset&$top=0'));
    const bobs = setId(await ctx.bob.get(`/Employee?$filter=${encodeURIComponent('"salary > 100000"')}&$method=entityset&$top=0`));
    if (!mine || !bobs) throw new Error('the sets could not be made');
    const unknown = await guest.get(`/Employee/$entityset/${mine}?$logicOperator=AND&$otherCollection=${'0'.repeat(32)}&$top=0`);
    const another = await guest.get(`/Employee/$entityset/${mine}?$logicOperator=OR&$otherCollection=${bobs}&$top=0`);
    v.check(unknown.status === 404 && errCode(unknown) === 1802, `an unknown id answered ${statusOf(unknown)}`);
    v.check(another.status === 404 && errCode(another) === 1802, `another session's set answered ${statusOf(another)}${another.status === 200 ? ` (${another.json?.__COUNT} entities)` : ''}`);
    return v.result(`an unknown id: ${statusOf(unknown)}; bob's set from a guest: ${statusOf(another)}`);
  },
};

const parameterTypes: AttackCase = {
  id: 'function-parameters',
  issue: 34,
  finding: 'a function given a parameter of the wrong type (`hire ["x"]`, `payroll [null]`) answered 500',
  target: '4xx naming the parameter (the client\'s mistake), checked before the call',
  async run(ctx) {
    const v = new Verdict();
    const parts: string[] = [];
    for (const [who, name, args] of [[ctx.alice, 'hire', ['x']], [ctx.bob, 'payroll', [null]], [ctx.alice, 'hire', [42]]] as const) {
      const a = await who.post(`/$catalog/${name}`, args);
      const message = String(a.json?.__ERROR?.[0]?.message ?? '');
      parts.push(`${name} ${JSON.stringify(args)}: ${statusOf(a)}`);
      v.check(a.status >= 400 && a.status < 500 && /param|argument/i.test(message), `${name} ${JSON.stringify(args)} answered ${statusOf(a)}: ${message.slice(0, 120)}`);
    }
    return v.result(parts.join(', '));
  },
};

const staleStamp: AttackCase = {
  id: 'function-stamp',
  issue: 19,
  finding: 'an entity parameter\'s __STAMP was ignored: `hire` saved over a concurrent change that `$method=update` would refuse',
  target: '409 (1263), the concurrent change kept',
  async run(ctx) {
    const v = new Verdict();
    const key = String((await ctx.alice.get('/Employee?$top=1&$skip=2&$orderby=employeeNumber&$attributes=ID')).json.__ENTITIES[0].__KEY);
    const read = await ctx.alice.get(`/Employee(${key})?$attributes=lastName`);
    const was = read.json.lastName;
    await setValue(ctx.alice, 'Employee', key, { lastName: `${was} (changed)` });
    try {
      const a = await ctx.alice.post('/$catalog/hire', [{ __DATACLASS: 'Employee', __ENTITY: true, __KEY: key, __STAMP: read.json.__STAMP, lastName: 'Stale' }]);
      const now = (await ctx.alice.get(`/Employee(${key})?$attributes=lastName`)).json.lastName;
      v.check(a.status === 409 && errCode(a) === 1263, `hire with a stale stamp answered ${statusOf(a)}`);
      v.check(now === `${was} (changed)`, `the name is now '${now}'`);
      return v.result(`hire with stamp ${read.json.__STAMP} after a change: ${statusOf(a)}; the name stays '${now}'`);
    } finally {
      await setValue(ctx.alice, 'Employee', key, { lastName: was });
    }
  },
};

const testHelpers: AttackCase = {
  id: 'test-helpers',
  issue: 19,
  finding: 'the demo\'s test helpers (`spin`, `pause`, `renameSlowly`) were callable by anyone in the default project',
  target: 'refused to every role of the demo (401 to a guest, 403 to a logged-in user), nothing run',
  async run(ctx) {
    const v = new Verdict();
    const guest = ctx.client('guest');
    const calls: readonly [string, unknown[]][] = [['spin', [3000]], ['pause', [3000]], ['whoCalls', [3000]], ['renameSlowly', [1, 'Hijacked', 3000]]];
    const parts: string[] = [];
    for (const [who, client, expect] of [['guest', guest, 401], ['alice', ctx.alice, 403], ['admin', ctx.admin, 403]] as const) {
      const statuses: string[] = [];
      for (const [name, args] of calls) {
        const a = await (client as Client).post(`/$catalog/${name}`, args);
        statuses.push(`${name} ${a.status}`);
        v.check(a.status === expect, `${who}: ${name} answered ${statusOf(a)}`);
        v.timed(a.ms < 1000, `${who}: ${name} answered in ${seconds(a.ms)}`);
      }
      parts.push(`${who}: ${statuses.join(', ')}`);
    }
    return v.result(parts.join('; '));
  },
};

const uploadQuota: AttackCase = {
  id: 'upload-quota',
  issue: 19,
  finding: 'unattached uploads were kept up to 24 h with no quota (500 MB in 7 s)',
  target: 'past --max-pending-uploads files or --max-pending-upload-size bytes per client: 429 (7044) with Retry-After, nothing kept',
  async run(ctx) {
    const v = new Verdict();
    const files = ctx.limits.pendingUploads;
    const bytes = ctx.limits.pendingUploadBytes;
    const byCount = ctx.client('alice (many uploads)');
    await byCount.login('alice', 'alice123');
    let refusedAt: number | undefined;
    let refusal;
    for (let i = 0; i <= files && refusedAt === undefined; i++) {
      const a = await byCount.request('POST', '/$upload?$binary=true&$timeout=2', { raw: Buffer.alloc(1024, i) });
      if (a.status !== 200) {
        refusedAt = i + 1;
        refusal = a;
      }
    }
    v.check(refusedAt === files + 1 && refusal?.status === 429 && errCode(refusal) === 7044 && refusal.headers['retry-after'] !== undefined, `upload ${refusedAt ?? 'none'} of ${files + 1} refused: ${refusal ? statusOf(refusal) : 'none'}`);
    const bySize = ctx.client('alice (big uploads)');
    await bySize.login('alice', 'alice123');
    const part = Math.floor(bytes * 0.6);
    const first = await bySize.request('POST', '/$upload?$binary=true&$timeout=2', { raw: Buffer.alloc(part, 1) });
    const second = await bySize.request('POST', '/$upload?$binary=true&$timeout=2', { raw: Buffer.alloc(part, 2) });
    v.check(first.status === 200, `the first ${(part / 2 ** 20).toFixed(1)} MB answered ${statusOf(first)}`);
    v.check(second.status === 429 && errCode(second) === 7044, `the second answered ${statusOf(second)}`);
    // (their $timeout: they expire at once)
    await sleep(2100);
    return v.result(`${files} files waiting: the next ${refusal ? statusOf(refusal) : 'accepted'} (Retry-After ${refusal?.headers['retry-after']}); ${(part / 2 ** 20).toFixed(1)} MB waiting (limit ${(bytes / 2 ** 20).toFixed(0)} MB): ${(part / 2 ** 20).toFixed(1)} MB more ${statusOf(second)}`);
  },
};

const imageQueue: AttackCase = {
  id: 'image-queue',
  issue: 34,
  finding: 'the image conversion queue had no bound: 12 queued 25-megapixel conversions made another client\'s wait 3.2 s',
  target: 'the queue bounded and one client\'s share bounded (503 or 429 with Retry-After past them): another client\'s conversion waits for at most the few conversions of one client\'s share, not for all twelve',
  async run(ctx) {
    const v = new Verdict();
    const tag = `Images ${Date.now()}`;
    const [company] = await createMany(ctx.alice, 'Company', [{ name: tag }], 1);
    try {
      const png = await sharp({ create: { width: 5000, height: 5000, channels: 3, background: { r: 200, g: 40, b: 90 } } }).png().toBuffer();
      const up = await ctx.alice.request('POST', '/$upload?$rawPict=true', { raw: png, headers: { 'content-type': 'image/png' } });
      if (up.status !== 200) throw new Error(`the upload: ${statusOf(up)} ${up.text.slice(0, 200)}`);
      await setValue(ctx.alice, 'Company', company, { logo: { ID: up.json.ID } });
      const path = `/Company(${company})/logo?$imageformat=jpeg&$expand=logo`;
      // one conversion alone: what a conversion costs on this machine now
      const alone = await ctx.client('alone').get(path, { timeoutMs: 120_000, keepText: 0 });
      if (alone.status !== 200) throw new Error(`a conversion alone answered ${statusOf(alone)}`);
      const attacker = ctx.client('attacker', ctx.address());
      const big = Array.from({ length: 12 }, () => attacker.get(path, { timeoutMs: 300_000, keepText: 0 }));
      await sleep(100);
      const other = await ctx.client('other').get('/Company(1)/logo?$imageformat=jpeg&$expand=logo', { timeoutMs: 300_000, keepText: 0 });
      const answers = await Promise.all(big);
      const counts = answers.reduce<Record<string, number>>((h, a) => ({ ...h, [statusOf(a)]: (h[statusOf(a)] ?? 0) + 1 }), {});
      const refused = answers.filter((a) => (a.status === 503 || a.status === 429) && a.headers['retry-after'] !== undefined).length;
      // one client's share is two (one running, one waiting), then its own: three conversions' time,
      // doubled for a machine whose load varies — half of what waiting behind all twelve costs
      const bound = 6 * alone.ms + 500;
      v.check(other.status === 200, `another client's conversion answered ${statusOf(other)}`);
      v.timed(other.ms <= bound, `another client's conversion answered after ${seconds(other.ms)} (${seconds(alone.ms)} a conversion alone)`);
      v.check(refused > 0, 'none of the 12 was refused: the queue took them all');
      // then from as many clients (each within its share) as the queue holds, and two more: those two are refused
      const queue = ctx.limits.queuedConversions;
      const many = await Promise.all(Array.from({ length: queue + 3 }, () => ctx.client('one of many').get(path, { timeoutMs: 300_000, keepText: 0 })));
      const busy = many.filter((a) => a.status === 503 && a.headers['retry-after'] !== undefined).length;
      v.check(busy >= 2, `${queue + 3} clients at once past a queue of ${queue}: ${busy} refused with 503`);
      const manyCounts = many.reduce<Record<string, number>>((h, a) => ({ ...h, [statusOf(a)]: (h[statusOf(a)] ?? 0) + 1 }), {});
      return v.result(`one conversion of 25 megapixels alone: ${seconds(alone.ms)}; 12 at once from one client: ${Object.entries(counts).map(([s, n]) => `${n}× ${s}`).join(', ')} (slowest ${seconds(Math.max(...answers.map((a) => a.ms)))}); another client's conversion meanwhile: ${statusOf(other)} after ${seconds(other.ms)} (bound ${seconds(bound)}); ${queue + 3} clients at once (queue ${queue}): ${Object.entries(manyCounts).map(([s, n]) => `${n}× ${s}`).join(', ')}`);
    } finally {
      await deleteWhere(ctx.alice, 'Company', `ID = ${company}`);
    }
  },
};

export const guardCases: readonly AttackCase[] = [crossSite, getLogout, hostCheck, otherCollection, parameterTypes, staleStamp, testHelpers, uploadQuota, imageQueue];
