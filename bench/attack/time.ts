// Attack cases on time: work that multiplies (a filter through levels of a crowded 1→N
// relation, issue 19), a LIKE pattern over one long text (issue 34: pattern length × text
// length in one row, from a URL or from a function's body), big writes (a batch of 250,000
// entities, a filtered delete of 250,000 rows: issue 19). What matters is what other clients see
// meanwhile: /health asked one request after another shows how long the event loop was held.

import {
  bulkCreate, createMany, deleteWhere, describeLatency, errCode, Probe, seconds, statusOf, underProbes, Verdict, type AttackCase, type CaseContext, type Client, type Json,
} from './harness.js';

/** /health's p99 on the quiet server, just before a case: what a probe's answer costs anyway (the machine may be loaded). */
export async function quietLatency(ctx: CaseContext): Promise<number> {
  const probe = new Probe(ctx.server.origin, '/health', ctx.address(), 10);
  await new Promise((resolve) => setTimeout(resolve, 500));
  return (await probe.stop()).p99;
}

/** A company of its own with `n` employees (the probe's crowd): two levels of colleagues then visit n³ rows. */
export async function crowd(ctx: CaseContext, n: number): Promise<{ company: string; remove(): Promise<void> }> {
  const tag = `Crowd ${Date.now()}`;
  const [company] = await createMany(ctx.alice, 'Company', [{ name: tag }], 1);
  await bulkCreate(ctx, 'Employee', Array.from({ length: n }, (_, i) => ({ firstName: 'Crowd', lastName: `Crowd${i}`, employer: { __KEY: company } })));
  return {
    company,
    async remove() {
      await deleteWhere(ctx.alice, 'Employee', `employer.ID = ${company}`);
      await deleteWhere(ctx.alice, 'Company', `ID = ${company}`);
    },
  };
}

const colleagues = (depth: number) => `$filter=${encodeURIComponent(`"${Array(depth).fill('colleagues').join('.')}.lastName = 'nobody'"`)}&$top=1`;

const deepFilter: AttackCase = {
  id: 'deep-filter',
  issue: 19,
  finding: 'a `$filter` through 7 levels of a 1→N relation (`colleagues.colleagues…lastName=a`) ran for more than 10 minutes, every other request waiting; depth 5 stalled 14 s',
  target: 'past the path limit refused (400) before it runs; within it, stopped at the query time limit (504, 7066), the loop held no longer than the limit + 100 ms',
  async run(ctx) {
    const v = new Verdict();
    const limit = ctx.limits.queryTimeoutMs;
    const quiet = await quietLatency(ctx);
    const people = await crowd(ctx, 1500);
    try {
      const guest = ctx.client('guest');
      const parts: string[] = [];
      const { health } = await underProbes(ctx, async () => {
        for (const depth of [7, 5, 2]) {
          const a = await guest.get(`/Employee?${colleagues(depth)}`, { timeoutMs: limit * 20 + 30_000 });
          parts.push(`depth ${depth}: ${statusOf(a)} in ${seconds(a.ms)}`);
          if (depth > 4) {
            v.check(a.status === 400 && errCode(a) === 7009, `depth ${depth} answered ${statusOf(a)}`);
            v.timed(a.ms < 1000, `depth ${depth} answered in ${seconds(a.ms)}`);
          } else {
            v.check(a.status === 200 || (a.status === 504 && errCode(a) === 7066), `depth ${depth} answered ${statusOf(a)}`);
            v.timed(a.ms < limit + 1000, `depth ${depth} answered in ${seconds(a.ms)} (limit ${seconds(limit)})`);
          }
        }
      });
      v.timed(health.max <= limit + 100 + quiet, `/health waited ${seconds(health.max)} (limit ${seconds(limit)} + 100 ms + ${Math.round(quiet)} ms of a quiet probe)`);
      return v.result(`1,500 employees in one company; ${parts.join(', ')}; ${describeLatency('/health', health)}`, { health, quiet });
    } finally {
      await people.remove();
    }
  },
};

/** Sets an attribute of one entity as `who` (its stamp read first); resolves to the entity's key. */
export async function setValue(who: Client, dataClass: string, key: string, values: Record<string, unknown>): Promise<void> {
  const got = await who.get(`/${dataClass}(${key})?$attributes=ID`);
  if (got.status !== 200) throw new Error(`reading ${dataClass}(${key}): ${statusOf(got)}`);
  const a = await who.post(`/${dataClass}?$method=update`, { __KEY: key, __STAMP: got.json.__STAMP, ...values }, { timeoutMs: 120_000 });
  if (a.status !== 200) throw new Error(`updating ${dataClass}(${key}): ${statusOf(a)} ${a.text.slice(0, 200)}`);
}

const longLike: AttackCase = {
  id: 'long-like',
  issue: 34,
  finding: 'an editor stores one 1,000,000-character text; a guest\'s `$filter="notes=@aaaa…b@"&$top=1` with a 7,000-character pattern answered 504 after 23.8 s, every other request waiting 23.3 s (1,000 characters: 7.2 s; 3,000: 11.9 s)',
  target: 'no statement holds the event loop more than the query time limit + 100 ms; while four such requests run, /health and a read by key answer within 1 s (p99)',
  async run(ctx) {
    const v = new Verdict();
    const limit = ctx.limits.queryTimeoutMs;
    const quiet = await quietLatency(ctx);
    const guest = ctx.client('guest');
    const key = String((await guest.get('/Employee?$top=1&$orderby=employeeNumber&$attributes=ID')).json.__ENTITIES[0].__KEY);
    await setValue(ctx.alice, 'Employee', key, { notes: 'a'.repeat(999_999) });
    try {
      const pattern = `@${'a'.repeat(ctx.short ? 2998 : 6998)}b@`;
      const path = `/Employee?$filter=${encodeURIComponent(`"notes=${pattern}"`)}&$top=1`;
      const bound = limit * 8 + 30_000;
      const one = await underProbes(ctx, () => guest.get(path, { timeoutMs: bound }));
      v.check(one.value.status === 200 || one.value.status === 504 || one.value.status === 400, `one request answered ${statusOf(one.value)}`);
      // the statement stopped at the limit, whichever engine runs it (a statement PostgreSQL cannot interrupt holds a pool connection)
      v.timed(one.value.ms <= limit + 1000, `one request took ${seconds(one.value.ms)} (limit ${seconds(limit)})`);
      v.timed(one.health.max <= limit + 100 + quiet, `with one request /health waited ${seconds(one.health.max)} (limit ${seconds(limit)} + 100 ms + ${Math.round(quiet)} ms)`);
      const four = await underProbes(ctx, () => Promise.all(Array.from({ length: 4 }, () => ctx.client('guest').get(path, { timeoutMs: bound }))), `/Employee(${key})?$attributes=lastName`);
      v.timed(four.health.p99 < 1000, `with four, /health p99 ${seconds(four.health.p99)}`);
      const slowest = Math.max(...four.value.map((a) => a.ms));
      v.timed(slowest <= 4 * limit + 1000, `with four, the slowest took ${seconds(slowest)} (four limits: ${seconds(4 * limit)})`);
      v.timed((four.read?.p99 ?? 0) < 1000, `with four, read by key p99 ${seconds(four.read?.p99 ?? 0)}`);
      const statuses = four.value.map((a) => statusOf(a)).join(', ');
      return v.result(`${pattern.length}-character pattern over a 999,999-character text: one ${statusOf(one.value)} in ${seconds(one.value.ms)}, ${describeLatency('/health', one.health)}; four at once: ${statuses} (slowest ${seconds(Math.max(...four.value.map((a) => a.ms)))}), ${describeLatency('/health', four.health)}, ${describeLatency('read by key', four.read!)}`, { one: one.health, four: four.health, read: four.read, quiet });
    } finally {
      await setValue(ctx.alice, 'Employee', key, { notes: null });
    }
  },
};

const longLikeFunction: AttackCase = {
  id: 'long-like-function',
  issue: 34,
  finding: 'a function that passes a body parameter into a query has no URL-length bound (a LIKE pattern of any length, over a long text)',
  target: 'the same: the loop held no more than the query time limit + 100 ms, whatever the pattern\'s length',
  async run(ctx) {
    const v = new Verdict();
    const limit = ctx.limits.queryTimeoutMs;
    const quiet = await quietLatency(ctx);
    const tag = `Long ${Date.now()}`;
    const [city] = await createMany(ctx.alice, 'City', [{ name: tag, country: 'a'.repeat(999_999) }], 1);
    const [company] = await createMany(ctx.alice, 'Company', [{ name: tag, city: { __KEY: city } }], 1);
    try {
      // past the URL's 16 KB and the query text's 8 KB: a body parameter is bounded by the body's limit only
      const pattern = `@${'a'.repeat(20_000)}b@`;
      const guest = ctx.client('guest');
      const { value: a, health } = await underProbes(ctx, () => guest.post('/$singleton/Tools/companiesIn', [pattern], { timeoutMs: limit * 20 + 60_000 }));
      v.check(a.status < 500 || (a.status === 504 && (errCode(a) === 7066 || errCode(a) === 7020)), `answered ${statusOf(a)}`);
      v.timed(a.ms <= ctx.limits.functionTimeoutMs + 1000, `answered after ${seconds(a.ms)} (the function time limit: ${seconds(ctx.limits.functionTimeoutMs)})`);
      v.timed(health.max <= limit + 100 + quiet, `/health waited ${seconds(health.max)} (limit ${seconds(limit)} + 100 ms + ${Math.round(quiet)} ms)`);
      return v.result(`Tools.companiesIn with a ${pattern.length}-character pattern over a 999,999-character country: ${statusOf(a)} in ${seconds(a.ms)}; ${describeLatency('/health', health)}`, { health, quiet });
    } finally {
      await deleteWhere(ctx.alice, 'Company', `ID = ${company}`);
      await deleteWhere(ctx.alice, 'City', `ID = ${city}`);
    }
  },
};

const bigBatch: AttackCase = {
  id: 'big-batch',
  issue: 19,
  finding: 'a 250,000-entity batch held the event loop 39 s',
  target: 'past --max-batch-entities refused (400, 7009) before anything is written; a batch at the limit written in chunks that let other requests through (/health never waits 1 s)',
  async run(ctx) {
    const v = new Verdict();
    const tag = `Batch ${Date.now()}`;
    const count = async () => Number((await ctx.alice.get(`/City?$filter=${encodeURIComponent(`"name = '${tag}@'"`)}&$top=0`)).json?.__COUNT);
    try {
      const max = ctx.limits.maxBatchEntities;
      // the probe's 250,000 (short: one past the limit)
      const over = ctx.short ? max + 1 : 250_000;
      // the batch written: at the limit (short, on PostgreSQL, which holds no loop whatever the batch: 1,000, a round trip each)
      const written = ctx.short && ctx.engine === 'postgres' ? 1000 : max;
      const huge = await ctx.alice.post('/City?$method=update', Array.from({ length: over }, (_, i) => ({ name: `${tag} ${i}` })), { timeoutMs: 300_000 });
      v.check(huge.status === 400 && errCode(huge) === 7009, `${over} entities answered ${statusOf(huge)}`);
      v.check(await count() === 0, 'some of the refused batch was written');
      const { value: at, health } = await underProbes(ctx, () => ctx.alice.post('/City?$method=update', Array.from({ length: written }, (_, i) => ({ name: `${tag} ${i}` })), { timeoutMs: 600_000, keepText: 64 * 2 ** 20 }));
      // what the answer says is what is stored: a batch (not $atomic) saves each entity on its own,
      // and one the request's time budget did not reach is answered with its error, not stored
      const stored = await count();
      const answered: Json[] = at.json?.__ENTITIES ?? [];
      const refused = answered.filter((e) => e.__ERROR !== undefined).length;
      v.check((at.status === 200 && answered.length === written && stored === written - refused) || (at.status === 504 && stored === 0), `${written} entities answered ${statusOf(at)} (${refused} with an error), ${stored} stored`);
      v.timed(health.max < 1000, `/health waited ${seconds(health.max)} during the batch of ${written}`);
      return v.result(`${over}: ${statusOf(huge)} in ${seconds(huge.ms)}; ${written}${written === max ? ' (the limit)' : ''}: ${statusOf(at)} in ${seconds(at.ms)}, ${stored} stored${refused ? `, ${refused} answered with their error` : ''}, ${describeLatency('/health', health)}`, { health });
    } finally {
      await deleteWhere(ctx.alice, 'City', `name = '${tag}@'`);
    }
  },
};

const bigDelete: AttackCase = {
  id: 'big-delete',
  issue: 19,
  finding: 'a filtered delete of 250,000 rows held the event loop 13 s (on PostgreSQL it took 338 s)',
  target: 'deleted in chunks that let other requests through (/health and reads by key answered, never waiting 1 s); all or nothing (504 past the time budget: nothing deleted)',
  async run(ctx) {
    const v = new Verdict();
    // short: enough that one unchunked delete would hold SQLite's loop past a second (13 s for 250,000)
    const rows = ctx.short ? 30_000 : 250_000;
    const tag = `Del ${Date.now()}`;
    const filter = `name = '${tag}@'`;
    const count = async () => Number((await ctx.alice.get(`/City?$filter=${encodeURIComponent(`"${filter}"`)}&$top=0`, { timeoutMs: 120_000 })).json?.__COUNT);
    await bulkCreate(ctx, 'City', Array.from({ length: rows }, (_, i) => ({ name: `${tag} ${i}`, population: i })));
    try {
      const { value: a, health, read } = await underProbes(ctx, () => ctx.alice.post(`/City?$filter=${encodeURIComponent(`"${filter}"`)}&$method=delete`, undefined, { timeoutMs: 900_000 }), '/Company(1)');
      const left = await count();
      v.check((a.status === 200 && left === 0) || (a.status === 504 && left === rows), `answered ${statusOf(a)} with ${left} of ${rows} rows left`);
      v.timed(health.max < 1000, `/health waited ${seconds(health.max)}`);
      v.check((read?.count ?? 0) > 0, 'no read by key was answered');
      v.timed((read?.max ?? 0) < 1000, `reads by key: ${describeLatency('read', read!)}`);
      return v.result(`${rows} rows: ${statusOf(a)} in ${seconds(a.ms)}, ${left} left; ${describeLatency('/health', health)}; ${describeLatency('read by key', read!)}`, { health, read });
    } finally {
      // (what a 504 left: in slices the budget allows)
      await deleteWhere(ctx.alice, 'City', filter);
    }
  },
};

export const timeCases: readonly AttackCase[] = [deepFilter, longLike, longLikeFunction, bigBatch, bigDelete];
