// A function that never yields (the demo's spin) cannot be interrupted from its own thread: the
// watchdog answers it and, under the command's supervisor, replaces the server instance, so the
// server keeps serving on the same port. Over a real socket, with the real command.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { join } from 'node:path';
import { startCommand, tempDir } from '../support/helpers.js';

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

describe('function watchdog', () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  it('answers a call stuck in code that never yields with 504, then serves again on the same port', async () => {
    const server = await startCommand(['--port', '0', '--db', join(tmp.dir, 'demo.sqlite'), '--function-timeout', '500', '--roles', 'none', '--log-level', 'warn']);
    const { base } = server;
    try {
      const started = Date.now();
      const stuck = await post(`${base}/$catalog/spin`, [60_000]);
      assert.ok(Date.now() - started < 10_000, 'answered long before the function would end');
      assert.equal(stuck.status, 504);
      assert.equal(stuck.body.__ERROR[0].errCode, 7020);
      assert.match(stuck.body.__ERROR[0].message, /past the time limit \(--function-timeout\), by code that never yields while spin of the DataStore class ran: this server instance was stopped, and a new one takes its place/);
      // a new instance takes the same port
      let counts: { status: number } | undefined;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        counts = await post(`${base}/$catalog/counts`, []).catch(() => undefined);
        if (counts?.status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(counts?.status, 200, `served again: ${server.stderr()}`);
      assert.match(server.stderr(), /the server instance ended \(SIGKILL\); starting a new one on port \d+/);
    } finally {
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0, 'the supervisor stops with its server on SIGTERM');
  });

  it('only reports a stall on stderr when run alone (DATASET_REST_INSTANCE=1), and the call then finishes', async () => {
    const server = await startCommand(['--port', '0', '--db', join(tmp.dir, 'alone.sqlite'), '--function-timeout', '300', '--roles', 'none', '--log-level', 'warn'], { alone: true });
    const { base } = server;
    try {
      const res = await post(`${base}/$catalog/spin`, [1500]);
      assert.equal(res.status, 200, 'answered when it ended: it did its work');
      assert.match(server.stderr(), /by code that never yields while spin of the DataStore class ran; other requests wait until it yields/);
      assert.equal((await post(`${base}/$catalog/counts`, [])).status, 200, 'the same process serves on');
    } finally {
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0);
  });

  it('only reports a stall on stderr when embedded (no supervisor), and the call then finishes', async () => {
    const code = [
      "import { watchdog } from './src/functions/watchdog.ts';",
      "const id = watchdog.enter('busy of a test', 200, undefined);",
      'const end = Date.now() + 2000; while (Date.now() < end);',
      'watchdog.leave(id);',
      "process.stdout.write('finished');",
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    assert.equal(await new Promise((r) => child.on('exit', r)), 0, stderr);
    assert.equal(stdout, 'finished');
    assert.match(stderr, /dataset-rest: the server was held for \d+ ms, past the time limit \(--function-timeout\), by code that never yields while busy of a test ran; other requests wait until it yields/);
  });
});
