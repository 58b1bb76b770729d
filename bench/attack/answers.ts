// Attack cases on answers: one small request asking for a huge answer (issue 19's fan-out),
// answers nobody reads (issue 34: 45 connections of 29 MB each, a socket that stops reading),
// the loop held while one big answer is built, and the answers the size check did not measure
// (pages of at most 100 entities, entities reached through an alias over a 1→N relation,
// calculated values).

import type { Socket } from 'node:net';
import {
  closed, createMany, heldByServer, deleteWhere, describeLatency, describeRss, errCode, rawSocket, RssWatch, seconds, sleep, statusOf, underProbes, Verdict, type AttackCase, type CaseContext,
} from './harness.js';

/** The probe's 29 MB answer (320 employees, each with its ~8 colleagues and theirs: 20,000 entities), inside every limit. */
export const BIG_ANSWER = '/Employee?$top=10000&$attributes=colleagues.colleagues.*';
/** About 3 MB: each employee with its colleagues. */
const MID_ANSWER = '/Employee?$top=10000&$attributes=colleagues.*';

/** A connection that asks for `path` and reads only the first bytes of the answer (its status line), then stops reading. */
export interface StalledReader {
  readonly socket: Socket;
  /** the answer's status, from its first bytes (undefined: none came) */
  readonly status: Promise<number | undefined>;
  /** set once the server closed the connection: ms after the request was sent */
  closedAfterMs?: number;
}

export async function stalledReader(ctx: CaseContext, path: string, address: string): Promise<StalledReader> {
  const socket = await rawSocket(ctx.server.port, address);
  const sent = performance.now();
  const reader: { socket: Socket; status: Promise<number | undefined>; closedAfterMs?: number } = {
    socket,
    status: new Promise((resolve) => {
      socket.once('data', (chunk: Buffer) => {
        // the first bytes, then nothing more is read: the kernel's buffers fill, then the server's
        socket.pause();
        resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1]) || undefined);
      });
      socket.once('close', () => resolve(undefined));
    }),
  };
  socket.on('error', () => {});
  // (paused, the socket never sees the server let it go: the kernel is asked, every 250 ms)
  const watch = setInterval(() => {
    if (!heldByServer(socket)) {
      reader.closedAfterMs ??= performance.now() - sent;
      clearInterval(watch);
    }
  }, 250);
  void closed(socket).then(() => {
    reader.closedAfterMs ??= performance.now() - sent;
    clearInterval(watch);
  });
  socket.write(`GET /rest${path} HTTP/1.1\r\nHost: 127.0.0.1:${ctx.server.port}\r\n\r\n`);
  return reader;
}

const fanOut: AttackCase = {
  id: 'fan-out',
  issue: 19,
  finding: '`$top=10000&$attributes=colleagues.colleagues.colleagues.colleagues.*` (≈90 bytes) grew the process past 4 GB and killed it; three levels answered 333 MB after a 10–14 s stall',
  target: 'refused with 400 (7009) naming the limit before the work is done: within 1 s, RSS up less than 100 MB, /health never waiting 1 s',
  async run(ctx) {
    const v = new Verdict();
    const guest = ctx.client('guest');
    const rss = new RssWatch(ctx.server.pid);
    const parts: string[] = [];
    const { health } = await underProbes(ctx, async () => {
      for (const levels of [4, 3]) {
        const a = await guest.get(`/Employee?$top=10000&$attributes=${Array(levels).fill('colleagues').join('.')}.*`, { timeoutMs: 60_000 });
        parts.push(`${levels} levels: ${statusOf(a)} in ${seconds(a.ms)}`);
        v.check(a.status === 400 && errCode(a) === 7009, `${levels} levels answered ${statusOf(a)}`);
        v.timed(a.ms < 1000, `${levels} levels took ${seconds(a.ms)}`);
      }
    });
    const memory = await rss.stop(500);
    v.check(memory.peakMB - memory.beforeMB < 100, `RSS rose ${Math.round(memory.peakMB - memory.beforeMB)} MB`);
    v.timed(health.max < 1000, `/health waited ${seconds(health.max)}`);
    return v.result(`${parts.join(', ')}; ${describeRss(memory)}; ${describeLatency('/health', health)}`, { memory, health });
  },
};

const unreadAnswers: AttackCase = {
  id: 'unread-answers',
  issue: 34,
  finding: '45 connections each asking for a 29 MB answer (`$top=10000&$attributes=colleagues.colleagues.*`) and never reading it: 69 s of outage, 4.77 GB peak RSS, 2.8 GB never returned',
  target: 'RSS within 1 GB of its idle value; other clients\' p99 (/health, a read by key) under 1 s; past the in-flight budget 503 with Retry-After; a connection that stops reading is closed (send timeout)',
  async run(ctx) {
    const v = new Verdict();
    const connections = ctx.short ? 20 : 45;
    // held until the server has closed every connection it answered 200 and nobody reads, or (the
    // probe's 100 s; short: 20 s) the time is up
    const holdMs = ctx.short ? 20_000 : 100_000;
    const address = ctx.address();
    const rss = new RssWatch(ctx.server.pid);
    let readers: StalledReader[] = [];
    const known: (number | undefined | null)[] = [];
    let heldFor = 0;
    const { health, read } = await underProbes(ctx, async () => {
      const started = performance.now();
      readers = await Promise.all(Array.from({ length: connections }, () => stalledReader(ctx, BIG_ANSWER, address)));
      readers.forEach((r, i) => {
        known[i] = null;
        void r.status.then((status) => (known[i] = status));
      });
      const settled = () => readers.every((r, i) => r.closedAfterMs !== undefined || (known[i] !== null && known[i] !== 200));
      while (performance.now() - started < holdMs && !settled()) await sleep(250);
      heldFor = performance.now() - started;
    }, '/Company(1)');
    const statuses = await Promise.all(readers.map((r) => Promise.race([r.status, sleep(10).then(() => undefined)])));
    const answered = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 503).length;
    const stillOpen = readers.filter((r, i) => statuses[i] === 200 && r.closedAfterMs === undefined).length;
    for (const r of readers) r.socket.destroy();
    const memory = await rss.stop(3000);
    const histogram = Object.entries(statuses.reduce<Record<string, number>>((h, s) => ({ ...h, [String(s ?? 'none')]: (h[String(s ?? 'none')] ?? 0) + 1 }), {})).map(([s, n]) => `${n}× ${s}`).join(', ');
    v.check(memory.peakMB - memory.beforeMB < 1024, `RSS rose ${Math.round(memory.peakMB - memory.beforeMB)} MB`);
    v.timed(health.p99 < 1000, `/health p99 ${seconds(health.p99)}`);
    v.timed((read?.p99 ?? 0) < 1000, `read by key p99 ${seconds(read?.p99 ?? 0)}`);
    // (a refusal is fast: other clients refused would pass a latency check)
    v.check(health.failures === 0 && (read?.failures ?? 0) === 0, `other clients refused: /health ${health.failures}, read by key ${read?.failures ?? 0}`);
    const lastClosed = Math.max(0, ...readers.map((r) => r.closedAfterMs ?? 0));
    v.check(stillOpen === 0, `${stillOpen} connections that stopped reading were still open after ${seconds(heldFor)}`);
    return v.result(`${connections} connections, held ${seconds(heldFor)}: ${histogram} (first bytes), ${answered - stillOpen} of ${answered} unread closed by the server${answered > stillOpen ? ` (the last after ${seconds(lastClosed)})` : ''}; ${describeRss(memory)}; ${describeLatency('/health', health)}; ${describeLatency('read by key', read!)}`, { memory, health, read, answered, refused, stillOpen });
  },
};

const unreadSocket: AttackCase = {
  id: 'unread-socket',
  issue: 34,
  finding: 'a socket that stops reading a 3 MB answer was still open after 100 s',
  target: 'the server lets go of a connection whose client stops reading within the send timeout (+ 5 s), the answer in its buffers or the kernel\'s',
  async run(ctx) {
    const v = new Verdict();
    // the send timeout and a few seconds (without one, the probe's 100 s): the wait ends when the
    // server lets the connection go — whether its answer waits in the process or in the kernel's
    // buffers (a 3 MB answer fits in those of the loopback: a keep-alive of 72 s then holds it)
    const waitMs = ctx.limits.sendTimeoutMs ? ctx.limits.sendTimeoutMs + 5000 : 100_000;
    const reader = await stalledReader(ctx, MID_ANSWER, ctx.address());
    const status = await reader.status;
    for (const end = Date.now() + waitMs; Date.now() < end && reader.closedAfterMs === undefined;) await sleep(100);
    const closedAfter = reader.closedAfterMs;
    reader.socket.destroy();
    v.check(status === 200, `the answer began with ${status ?? 'nothing'}`);
    v.check(closedAfter !== undefined, `still open after ${seconds(waitMs)}`);
    return v.result(`${status ?? 'no'} answer, ${closedAfter === undefined ? `still open after ${seconds(waitMs)}` : `closed by the server after ${seconds(closedAfter)}`}`, { closedAfter });
  },
};

const buildStall: AttackCase = {
  id: 'answer-build-stall',
  issue: 34,
  finding: 'building one 29 MB answer (`colleagues.colleagues.*`) held the event loop 1.5–2.4 s',
  target: 'the loop held less than 1 s while one is built and sent (bounded, or built in slices): /health never waits 1 s',
  async run(ctx) {
    const v = new Verdict();
    const reader = ctx.client('reader');
    const sizes: string[] = [];
    const { health } = await underProbes(ctx, async () => {
      for (let i = 0; i < (ctx.short ? 2 : 5); i++) {
        const a = await reader.get(BIG_ANSWER, { timeoutMs: 120_000, keepText: 0 });
        sizes.push(`${statusOf(a)} ${(a.bytes / 2 ** 20).toFixed(1)} MB in ${seconds(a.ms)}`);
        v.check(a.status === 200, `answered ${statusOf(a)}`);
      }
    });
    v.timed(health.max < 1000, `/health waited ${seconds(health.max)}`);
    return v.result(`${sizes.join(', ')}; ${describeLatency('/health', health)}`, { health });
  },
};

/**
 * Values the size check did not count: a page of at most 100 entities, entities inlined through
 * an alias over a 1→N relation (`colleagues`: employer.staff, each entity again under each of
 * its colleagues), and a calculated value (`fullName`, made of `firstName`).
 */
const smallPages: AttackCase = {
  id: 'unmeasured-answers',
  issue: 34,
  finding: 'pages of 100 rows or fewer are not size-checked (100 × the text limit per attribute), nor entities reached through an alias over a 1→N relation, nor calculated values',
  target: 'each refused with 400 (7009) past --max-answer-size (counted, measured or computed: before the answer is made)',
  async run(ctx) {
    const v = new Verdict();
    const limit = ctx.limits.maxAnswerBytes;
    const text = ctx.limits.maxTextLength;
    // a page: `pageRows` entities × (notes + firstName + fullName ≈ 3 texts) past the limit, under 100 rows
    const pageRows = Math.min(100, Math.ceil(limit / (3 * text)) + 1);
    // an alias level: k entities each inlining its k colleagues (k² ≤ 100 entities a level)
    const k = Math.ceil(Math.sqrt(limit / text)) + 1;
    const tag = `Unmeasured ${Date.now()}`;
    const long = (c: string) => c.repeat(text);
    const companies = await createMany(ctx.alice, 'Company', [{ name: `${tag} page` }, { name: `${tag} alias` }], 2);
    try {
      // bodies within the JSON limit (10 MB): four 2 MB entities a request
      // (bodies within the JSON limit: four 2 MB entities a request)
      const rows = [
        ...Array.from({ length: pageRows }, (_, i) => ({ firstName: long('f'), lastName: `P${i}`, notes: long('n'), employer: { __KEY: companies[0] } })),
        ...Array.from({ length: k }, (_, i) => ({ firstName: long('f'), lastName: `A${i}`, notes: long('n'), employer: { __KEY: companies[1] } })),
      ];
      await createMany(ctx.alice, 'Employee', rows, 4);
      const guest = ctx.client('guest');
      const reads = [
        ['a page of ' + pageRows, `/Employee?$top=100&$filter=${encodeURIComponent(`"employer.ID = ${companies[0]}"`)}&$attributes=notes,firstName,fullName`],
        [`an alias over 1→N (${k}×${k})`, `/Employee?$filter=${encodeURIComponent(`"employer.ID = ${companies[1]}"`)}&$attributes=colleagues.notes`],
        [`calculated values (${k}×${k})`, `/Employee?$filter=${encodeURIComponent(`"employer.ID = ${companies[1]}"`)}&$attributes=fullName,colleagues.fullName`],
      ] as const;
      const parts: string[] = [];
      const rss = new RssWatch(ctx.server.pid);
      for (const [what, path] of reads) {
        const a = await guest.get(path, { timeoutMs: 120_000, keepText: 4096 });
        parts.push(`${what}: ${statusOf(a)}${a.status === 200 ? ` ${(a.bytes / 2 ** 20).toFixed(0)} MB` : ''} in ${seconds(a.ms)}`);
        v.check(a.status === 400 && errCode(a) === 7009, `${what} answered ${statusOf(a)}${a.status === 200 ? ` (${(a.bytes / 2 ** 20).toFixed(0)} MB past a ${(limit / 2 ** 20).toFixed(0)} MB limit)` : ''}`);
      }
      // (RSS is told, not judged: a page of at most 100 rows is counted as its rows are read, before any text is made of them)
      const memory = await rss.stop();
      return v.result(`limit ${(limit / 2 ** 20).toFixed(0)} MB: ${parts.join('; ')}; ${describeRss(memory)}`, { memory });
    } finally {
      for (const c of companies) await deleteWhere(ctx.alice, 'Employee', `employer.ID = ${c}`);
      await deleteWhere(ctx.alice, 'Company', `name = '${tag}@'`);
    }
  },
};

export const answerCases: readonly AttackCase[] = [fanOut, buildStall, unreadAnswers, unreadSocket, smallPages];
