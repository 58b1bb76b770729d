// A 256 MB blob up and down through a server of its own process (spec "Upload", reference
// §2.6): streamed into the database and back out, every byte checked, the server's peak memory
// growing by well under the file's size. Split from http-files.test.ts: it takes a minute or more
// and measures the process's memory, so test:quick leaves this file out.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startCommand, tempDir, testDatabase } from '../support/helpers.js';

type Json = any;

describe('HTTP: a 256 MB blob up and down', () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  /** Kilobytes the process holds now (VmRSS) and held at its peak since the last reset (VmHWM). */
  const memory = (pid: number) => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]);
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  };

  it('streams it into the database and back out without holding it in memory (the peaks are reported)', async (t) => {
    // Holding the file would grow the server's peak by at least its size. A stream also leaves spent
    // buffers behind until V8 collects them, up to its allowance for memory outside its heap (64 MB
    // past what was live), whatever the size: PostgreSQL's driver reaches it (a chunk arrives as
    // socket reads, then hex text, then bytes). So the file is four times that, the bound half of it.
    const SIZE = 256 * 1024 * 1024;
    const BOUND = SIZE / 2 / 1024 / 1024;
    const PIECE = 64 * 1024;
    // the server alone in its own process, so that its memory is its own
    const server = await startCommand(['--port', '0', '--db', await testDatabase(join(tmp.dir, 'demo.sqlite')), '--roles', 'none', '--max-upload-size', '300MB', '--log-level', 'warn'], { alone: true });
    const { base } = server;
    const pid = server.child.pid as number;
    try {
      const send = () => new Promise<string>((resolve, reject) => {
        const req = httpRequest(`${base}/$upload?$binary=true`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += String(d)));
          res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text).ID) : reject(new Error(text))));
        });
        req.on('error', reject);
        let i = 0;
        const pump = () => {
          while (i * PIECE < SIZE) if (!req.write(Buffer.alloc(PIECE, i++ % 251))) return void req.once('drain', pump);
          req.end();
        };
        pump();
      });
      await send(); // warm-up: code paths, the database's growth
      const before = memory(pid).rss;
      writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM
      const id = await send();
      const upGrowth = (memory(pid).peak - before) / 1024;
      t.diagnostic(`256 MB upload: the server's peak memory grew by ${upGrowth.toFixed(1)} MB (from ${(before / 1024).toFixed(0)} MB)`);
      assert.ok(upGrowth < BOUND, `the upload was held in memory: the peak grew by ${upGrowth.toFixed(1)} MB`);
      assert.match(id, /^[0-9A-F]{32}$/);

      const employee = ((await (await fetch(`${base}/Employee?$top=1&$attributes=ID`)).json()) as Json).__ENTITIES[0];
      const saved = await fetch(`${base}/Employee?$method=update`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ __KEY: employee.__KEY, __STAMP: employee.__STAMP, resume: { ID: id } }) });
      assert.equal(saved.status, 200, await saved.clone().text());
      assert.equal(((await saved.json()) as Json).__KEY, employee.__KEY);

      // read back slowly enough that a server holding the file would show it, checking every byte
      const downBefore = memory(pid).rss;
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const res = await fetch(`${base}/Employee(${employee.__KEY})/resume?$binary=true`);
      assert.equal(res.status, 200, res.status === 200 ? '' : await res.text());
      assert.equal(res.headers.get('content-length'), String(SIZE));
      let offset = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (let j = 0; j < chunk.length; j += 4096) {
          const at = offset + j;
          assert.equal(chunk[j], Math.floor(at / PIECE) % 251, `byte ${at}`);
        }
        offset += chunk.length;
      }
      assert.equal(offset, SIZE);
      const downGrowth = (memory(pid).peak - downBefore) / 1024;
      t.diagnostic(`256 MB download: the server's peak memory grew by ${downGrowth.toFixed(1)} MB (from ${(downBefore / 1024).toFixed(0)} MB)`);
      assert.ok(downGrowth < BOUND, `the download was held in memory: the peak grew by ${downGrowth.toFixed(1)} MB`);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
