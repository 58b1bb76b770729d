// The replica bench (`npm run bench:replicas`): read throughput of our server on a PostgreSQL
// primary alone against the same server on the primary with one streaming replica
// (--db-replica), same data (the bench's Item table), loaded with autocannon on 127.0.0.1 in
// alternating rounds. Both PostgreSQL servers, the two server processes and the load generator
// share this machine's cores: the req/s say what one machine does, not what a replica on a machine
// of its own adds. The primary's CPU per request (its postmaster and backends) is what a replica
// takes off it, and is the figure that carries to a real deployment.
//
// A third configuration, two instances on the primary alone (the load split between them), shows
// what a second stateless instance adds on the same machine.
//
// Options (after `npm run bench:replicas --`): --rows N (10,000), --duration S per configuration
// and scenario (8, in --rounds R alternating rounds: 2), --warmup S (1), --connections N (10).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { createProject, itemValues } from './fixture.js';
import { formatTable, processCpuMs, processTreeCpuMs } from './measure.js';
import { startServer, type ServerProcess } from './processes.js';
import { clusterUnavailable, startReplicaCluster } from '../test/storage/replicas-cluster.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '10' },
  },
});
const rows = Number(values.rows);
const rounds = Number(values.rounds);
const roundSeconds = Math.max(1, Math.round(Number(values.duration) / rounds));
const connections = Number(values.connections);

const unavailable = clusterUnavailable();
if (unavailable) {
  console.log(`replica bench: skipped — ${unavailable}`);
  process.exit(0);
}

/** a page of 100 items whose name begins with a word and 3 digits (about 10 of each 1,000 rows), and a read by key */
function prefixOf(n: number): string {
  const name = itemValues(n).name;
  return name.slice(0, name.indexOf('-') + 3);
}
const SCENARIOS = [
  { name: 'by key', path: (n: number) => `/rest/Item(${n + 1})` },
  { name: 'filtered page of 100', path: (n: number) => `/rest/Item?$filter=${encodeURIComponent('"name begin :1"')}&$params=${encodeURIComponent(JSON.stringify([prefixOf(n)]))}&$top=100` },
];

const cluster = await startReplicaCluster();
const servers: ServerProcess[] = [];
try {
  const admin = new pg.Client({ connectionString: cluster.primaryUrl });
  await admin.connect();
  await admin.query("CREATE DATABASE bench ENCODING 'UTF8' TEMPLATE template0");
  await admin.end();
  const db = new URL('/bench', cluster.primaryUrl).href;
  const replica = new URL('/bench', cluster.standbyUrl).href;
  const dir = mkdtempSync(join(tmpdir(), 'dataset-rest-replica-bench-'));
  const project = await createProject(dir, rows, 'sql', db);
  console.log(`# replica bench: ${rows} items (filled in ${Math.round(project.fillMs)} ms), standby by ${cluster.backup}, ${connections} connections, ${rounds} rounds of ${roundSeconds} s per configuration and scenario, loopback`);

  const start = (name: string, extra: string[]) =>
    startServer({ name, args: ['bin/dataset-rest.mjs', '--project', dir, '--db', db, '--roles', 'none', '--port', '0', '--log-level', 'warn', ...extra], cwd: ROOT, ready: /dataset-rest listening on (http:\/\/\S+)\/rest/ });
  const alone = await start('primary alone', []);
  const second = await start('second instance', []);
  const withReplica = await start('primary + replica', ['--db-replica', replica]);
  servers.push(alone, second, withReplica);
  // (two instances: the load split between them, half the connections each)
  const configs = [
    { name: 'primary alone', servers: [alone] },
    { name: '2 instances, primary alone', servers: [alone, second] },
    { name: 'primary + 1 replica', servers: [withReplica] },
  ];

  type Tally = { requests: number; seconds: number; primaryMs: number; standbyMs: number; serverMs: number; non2xx: number };
  const table: string[][] = [];
  for (const scenario of SCENARIOS) {
    const tallies = new Map(configs.map((c) => [c.name, { requests: 0, seconds: 0, primaryMs: 0, standbyMs: 0, serverMs: 0, non2xx: 0 } as Tally]));
    const load = async (on: readonly ServerProcess[], seconds: number, into?: Tally) => {
      const serverCpu = () => on.reduce((ms, server) => ms + (processCpuMs(server.pid) ?? 0), 0);
      const cpu = () => [processTreeCpuMs(cluster.primaryPid) ?? 0, processTreeCpuMs(cluster.standbyPid) ?? 0, serverCpu()];
      const before = cpu();
      const results = await Promise.all(on.map((server) => autocannon({
        url: server.url.replace(/\/rest$/, ''),
        connections: Math.max(1, Math.round(connections / on.length)),
        duration: seconds,
        timeout: 10,
        requests: [{ setupRequest: (request) => ({ ...request, path: scenario.path(Math.floor(Math.random() * rows)) }) }],
      })));
      const after = cpu();
      if (!into) return;
      into.requests += results.reduce((n, r) => n + r.requests.total, 0);
      into.seconds += Math.max(...results.map((r) => r.duration));
      into.non2xx += results.reduce((n, r) => n + r.non2xx, 0);
      into.primaryMs += after[0] - before[0];
      into.standbyMs += after[1] - before[1];
      into.serverMs += after[2] - before[2];
    };
    for (const c of configs) await load(c.servers, Number(values.warmup));
    for (let round = 0; round < rounds; round++) {
      // (alternating, each round in the other order: both meet the machine's moods alike)
      for (const c of round % 2 === 0 ? configs : [...configs].reverse()) await load(c.servers, roundSeconds, tallies.get(c.name));
    }
    const alone = tallies.get(configs[0].name) as Tally;
    for (const c of configs) {
      const t = tallies.get(c.name) as Tally;
      const rps = t.requests / t.seconds;
      const perRequest = (ms: number) => ((ms * 1000) / Math.max(1, t.requests)).toFixed(0);
      table.push([scenario.name, c.name, rps.toFixed(0), `${(rps / (alone.requests / alone.seconds)).toFixed(2)}×`, perRequest(t.primaryMs), perRequest(t.standbyMs), perRequest(t.serverMs), String(t.non2xx)]);
    }
  }
  console.log(formatTable(['scenario', 'configuration', 'req/s', 'vs alone', 'primary µs/req', 'standby µs/req', 'server µs/req', 'non-2xx'], table));
  console.log('# µs/req: CPU of the PostgreSQL primary (its postmaster and backends), of the standby, and of our server process(es), per request answered');
} finally {
  for (const s of servers) await s.stop();
  await cluster.stop();
}
