// Attack cases on connections (issue 19): a body trickled a byte at a time (the socket was kept
// forever), connections past the per-address and total caps, and Node's own refusals (bad
// request lines, headers too large) in the server's __ERROR shape.

import type { Socket } from 'node:net';
import { closed, rawSocket, seconds, sleep, Verdict, type AttackCase, type CaseContext, type Json } from './harness.js';

/** What came back on a raw socket until it closed (or `waitMs` passed): the status, the body parsed, and when it closed. */
interface Exchange {
  readonly status?: number;
  readonly retryAfter?: string;
  readonly json: Json;
  /** ms from the start of the wait until the server closed the socket (undefined: still open) */
  readonly closedAfterMs?: number;
}

function exchange(socket: Socket, waitMs: number): Promise<Exchange> {
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  socket.on('error', () => {});
  const parse = (closedAfterMs?: number): Exchange => {
    const head = text.slice(0, text.indexOf('\r\n\r\n') >>> 0);
    const body = text.indexOf('\r\n\r\n') >= 0 ? text.slice(text.indexOf('\r\n\r\n') + 4) : '';
    let json: Json;
    try {
      json = JSON.parse(Buffer.from(body, 'latin1').toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]) || undefined, retryAfter: /\r\nretry-after: *([^\r]*)/i.exec(head)?.[1], json, closedAfterMs };
  };
  return Promise.race([closed(socket).then((ms) => parse(ms)), sleep(waitMs).then(() => parse())]);
}

const code = (e: Exchange) => e.json?.__ERROR?.[0]?.errCode as number | undefined;
const describe = (e: Exchange) => `${e.status ?? 'nothing'}${code(e) ? ` (${code(e)})` : ''}${e.closedAfterMs === undefined ? ', left open' : `, closed after ${seconds(e.closedAfterMs)}`}`;

const slowBody: AttackCase = {
  id: 'slow-body',
  issue: 19,
  finding: 'a request body sent one byte every 10 s kept its socket forever (requestTimeout 0)',
  target: 'a JSON body not in full within --body-timeout answered 408 (7049), the connection closed, nothing of it kept',
  async run(ctx) {
    const v = new Verdict();
    const limit = ctx.limits.bodyTimeoutMs;
    const gapMs = ctx.short ? 500 : 10_000;
    const tag = `Slow ${Date.now()}`;
    const body = JSON.stringify({ name: tag, country: 'x'.repeat(150) });
    const socket = await rawSocket(ctx.server.port, ctx.address());
    socket.write(`POST /rest/City?$method=update HTTP/1.1\r\nHost: 127.0.0.1:${ctx.server.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCookie: ${ctx.alice.cookie}\r\n\r\n`);
    let sent = 0;
    const trickle = setInterval(() => {
      if (!socket.destroyed && sent < body.length) socket.write(body[sent++]);
    }, gapMs);
    const started = performance.now();
    const answer = await exchange(socket, limit + 35_000);
    clearInterval(trickle);
    socket.destroy();
    const tookMs = answer.closedAfterMs ?? performance.now() - started;
    const kept = Number((await ctx.alice.get(`/City?$filter=${encodeURIComponent(`"name = '${tag}'"`)}&$top=0`)).json?.__COUNT);
    v.check(answer.status === 408 && code(answer) === 7049, `answered ${describe(answer)}`);
    v.check(answer.closedAfterMs !== undefined && tookMs < limit + 3000, `closed after ${seconds(tookMs)} (limit ${seconds(limit)})`);
    v.check(kept === 0, `${kept} kept`);
    return v.result(`a byte every ${seconds(gapMs)} (${sent} sent): ${describe(answer)} (limit ${seconds(limit)}); ${kept} kept`);
  },
};

/** Opens `n` connections from `address`; resolves to them and to what each got within `waitMs` (a refusal comes at once). */
async function connections(ctx: CaseContext, address: string, n: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = await rawSocket(ctx.server.port, address).catch(() => undefined);
    if (s) sockets.push(s);
  }
  return sockets;
}

const perAddress: AttackCase = {
  id: 'connections-per-address',
  issue: 19,
  finding: 'no cap on the connections one address may hold open',
  target: 'past --max-connections-per-address, 503 (7062) with Retry-After on the new connection, then closed; once one closes, a new one is served',
  async run(ctx) {
    const v = new Verdict();
    const cap = ctx.limits.connectionsPerAddress;
    const address = ctx.address();
    const held = await connections(ctx, address, cap);
    try {
      // (the server counts a connection once it accepts it: a moment for the last ones)
      await sleep(200);
      const extra = await rawSocket(ctx.server.port, address);
      const refused = await exchange(extra, 3000);
      v.check(refused.status === 503 && code(refused) === 7062 && refused.retryAfter !== undefined && refused.closedAfterMs !== undefined, `connection ${cap + 1} got ${describe(refused)}`);
      held.pop()?.destroy();
      await sleep(200);
      const again = await rawSocket(ctx.server.port, address);
      again.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${ctx.server.port}\r\nConnection: close\r\n\r\n`);
      const served = await exchange(again, 5000);
      v.check(served.status === 200, `after one closed, a new connection got ${describe(served)}`);
      return v.result(`${cap} open from ${address}; connection ${cap + 1}: ${describe(refused)}, Retry-After ${refused.retryAfter}; one closed, the next: ${served.status}`);
    } finally {
      for (const s of held) s.destroy();
    }
  },
};

const total: AttackCase = {
  id: 'connections-total',
  issue: 19,
  finding: 'no cap on the connections the server holds open',
  target: 'past --max-connections, 503 (7062) with Retry-After, then closed; once some close, new ones are served',
  async run(ctx) {
    const v = new Verdict();
    const cap = ctx.limits.maxConnections;
    const perAddress = Math.max(1, ctx.limits.connectionsPerAddress - 4);
    const held: Socket[] = [];
    try {
      // from as many addresses as it takes, each under its own cap, until cap + 10
      while (held.length < cap + 10) held.push(...(await connections(ctx, ctx.address(), Math.min(perAddress, cap + 10 - held.length))));
      const seen = await Promise.all(held.map((s) => exchange(s, 1500)));
      const refused = seen.filter((e) => e.status === 503 && code(e) === 7062 && e.retryAfter !== undefined && e.closedAfterMs !== undefined).length;
      const open = seen.filter((e) => e.closedAfterMs === undefined).length;
      v.check(refused >= 10, `${refused} of ${held.length} refused with 503 (7062)`);
      v.check(open <= cap, `${open} left open (cap ${cap})`);
      for (const s of held.splice(0)) s.destroy();
      await sleep(300);
      const again = await rawSocket(ctx.server.port, ctx.address());
      again.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${ctx.server.port}\r\nConnection: close\r\n\r\n`);
      const served = await exchange(again, 5000);
      v.check(served.status === 200, `afterwards a new connection got ${describe(served)}`);
      return v.result(`${seen.length} connections: ${open} served and open, ${refused} refused 503 (7062) and closed; afterwards ${served.status}`);
    } finally {
      for (const s of held) s.destroy();
    }
  },
};

const nodeErrors: AttackCase = {
  id: 'node-errors',
  issue: 19,
  finding: 'Node\'s own 400 and 431 answered outside the __ERROR shape (and the first probe\'s smuggling attempts, which held)',
  target: 'a bad request line: 400, headers past 16 KB: 431 (7048), a request framed twice (Content-Length and Transfer-Encoding): 400; each an __ERROR, the connection closed',
  async run(ctx) {
    const v = new Verdict();
    const bad = await rawSocket(ctx.server.port, ctx.address());
    bad.write('NOT A REQUEST\r\n\r\n');
    const badAnswer = await exchange(bad, 5000);
    v.check(badAnswer.status === 400 && typeof code(badAnswer) === 'number' && badAnswer.closedAfterMs !== undefined, `a bad request line got ${describe(badAnswer)}`);
    const big = await rawSocket(ctx.server.port, ctx.address());
    big.write(`GET /rest/$catalog HTTP/1.1\r\nHost: 127.0.0.1:${ctx.server.port}\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    const bigAnswer = await exchange(big, 5000);
    v.check(bigAnswer.status === 431 && code(bigAnswer) === 7048 && bigAnswer.closedAfterMs !== undefined, `20 KB of headers got ${describe(bigAnswer)}`);
    // a body framed two ways: a proxy reading one and the server the other would see two requests
    const twice = await rawSocket(ctx.server.port, ctx.address());
    twice.write(`POST /rest/City?$method=update HTTP/1.1\r\nHost: 127.0.0.1:${ctx.server.port}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /rest/$catalog HTTP/1.1\r\nHost: 127.0.0.1:${ctx.server.port}\r\n\r\n`);
    const twiceAnswer = await exchange(twice, 5000);
    v.check(twiceAnswer.status === 400 && typeof code(twiceAnswer) === 'number' && twiceAnswer.closedAfterMs !== undefined, `a request framed twice got ${describe(twiceAnswer)}`);
    bad.destroy();
    big.destroy();
    twice.destroy();
    return v.result(`a bad request line: ${describe(badAnswer)}; 20 KB of headers: ${describe(bigAnswer)}; Content-Length with Transfer-Encoding: ${describe(twiceAnswer)}`);
  },
};

export const clientCases: readonly AttackCase[] = [slowBody, perAddress, total, nodeErrors];
