// The compression bench (`npm run bench:compress`): what br and gzip save on pages of the demo's
// Employee (100 entities, and 100 with their employer inline), over a real socket on 127.0.0.1:
// bytes on the wire, and the server's time to the last byte (median of many requests, each
// encoding measured in turns), with what the bytes saved are worth on slower links.

import { request } from 'node:http';
import { join } from 'node:path';
import { buildServer } from '../src/http/server.js';
import { openProject } from '../src/project/open.js';
import { DEMO_DIR, tempDir } from '../test/support/helpers.js';

const ROUNDS = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 200;
const PAGES = ['/rest/Employee?$top=100', '/rest/Employee?$top=100&$expand=employer'];
const ENCODINGS = ['identity', 'gzip', 'br'] as const;
/** Links to price the bytes on: name and bits per second. */
const LINKS: [string, number][] = [['100 Mbit/s', 100e6], ['10 Mbit/s (4G)', 10e6], ['2 Mbit/s (3G)', 2e6]];

function fetchRaw(port: number, path: string, encoding: string): Promise<{ bytes: number; ms: number }> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': encoding } }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => resolve({ bytes, ms: Number(process.hrtime.bigint() - start) / 1e6 }));
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const tmp = tempDir('dataset-rest-compress-');
const ds = await openProject(DEMO_DIR, { db: join(tmp.dir, 'demo.sqlite'), roles: false });
const app = await buildServer(ds, { logLevel: 'silent', requestsPerMinute: 0 });
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as { port: number };
try {
  for (const path of PAGES) {
    const times: Record<string, number[]> = {};
    const sizes: Record<string, number> = {};
    for (const e of ENCODINGS) await fetchRaw(port, path, e); // warm up
    for (let i = 0; i < ROUNDS; i++) {
      for (const e of ENCODINGS) {
        const { bytes, ms } = await fetchRaw(port, path, e);
        (times[e] ??= []).push(ms);
        sizes[e] = bytes;
      }
    }
    console.log(`\n${path} (${ROUNDS} requests per encoding, medians)`);
    console.log('encoding   bytes    ratio  server+loopback ms  ' + LINKS.map(([n]) => `on ${n}`.padEnd(22)).join(''));
    for (const e of ENCODINGS) {
      const ms = median(times[e]);
      const transfer = LINKS.map(([, bps]) => `${(ms + (sizes[e] * 8 * 1000) / bps).toFixed(1)} ms`.padEnd(22)).join('');
      console.log(`${e.padEnd(9)}  ${String(sizes[e]).padStart(6)}  ${(sizes[e] / sizes.identity).toFixed(2).padStart(5)}  ${ms.toFixed(2).padStart(18)}  ${transfer}`);
    }
  }
  console.log('\n(on a link: the time measured here plus the bytes at that rate; latency left out, the same for all)');
} finally {
  await app.close();
  await ds.close();
  tmp.remove();
}
