// The suite's peers (bench/peers/): Platformatic DB over a copy of the same SQLite file and
// json-server over a JSON export of the same items, each compared with our server running on the
// same Node version as the peer (Node 22 from the npm registry: Platformatic needs it), read by
// read, in alternating rounds.

import { join } from 'node:path';
import { ourServerOnNode22, preparePeers, startJsonServer, startPlatformatic, VERSIONS, type Peer, type PeerRoutes } from '../peers/index.js';
import { temporaryFolder } from '../processes.js';
import { loadBoth, loadOne, type LoadSettings } from './load.js';
import { prefixOf } from './model.js';
import type { PeerComparison } from './results.js';

const PAGE = 100;

interface PeerRead {
  readonly id: string;
  readonly title: string;
  /** the issue's target for ours / Platformatic */
  readonly target: number;
  readonly ours: (n: number) => string;
  readonly peer: keyof PeerRoutes;
  readonly arg: (n: number) => number | string;
  readonly range: (size: number) => number;
}

const filter = (n: number): string => `$filter=${encodeURIComponent('"name begin :1"')}&$params=${encodeURIComponent(JSON.stringify([prefixOf(n)]))}`;

const READS: readonly PeerRead[] = [
  { id: 'byKey', title: 'By key', target: 2.5, ours: (n) => `/rest/Item(${n + 1})`, peer: 'byKey', arg: (n) => n + 1, range: (size) => size },
  { id: 'filtered', title: 'Filtered page (name prefix)', target: 1.2, ours: (n) => `/rest/Item?${filter(n)}&$top=${PAGE}`, peer: 'filtered', arg: prefixOf, range: (size) => size },
  { id: 'expanded', title: 'Page with an N→1 expanded', target: 1.2, ours: (n) => `/rest/Item?${filter(n)}&$top=${PAGE}&$expand=category`, peer: 'expanded', arg: prefixOf, range: (size) => size },
  { id: 'deepSkip', title: 'Page at a deep $skip', target: 1.2, ours: (n) => `/rest/Item?$top=${PAGE}&$skip=${n}`, peer: 'deepPage', arg: (n) => n, range: (size) => size - PAGE + 1 },
  {
    id: 'orderBy', title: '$orderby on an indexed attribute', target: 1.2, ours: (n) => `/rest/Item?$orderby=${encodeURIComponent('price desc')}&$top=${PAGE}&$skip=${n}`,
    peer: 'sortedPage', arg: (n) => n, range: (size) => Math.min(1000, size - PAGE) + 1,
  },
];

export interface PeerRun {
  /** the project (and its SQLite file) Platformatic is compared on */
  readonly dir: string;
  readonly db: string;
  readonly size: number;
  /** a project of json-server's size (10,000 items: it holds its data in memory and filters it in JavaScript) */
  readonly small: { readonly dir: string; readonly size: number };
  readonly load: LoadSettings;
  readonly log: (line: string) => void;
}

/** Ours (on Node 22) against each peer, every read both can do. */
export async function runPeers(r: PeerRun): Promise<{ comparisons: PeerComparison[]; versions: Record<string, string> }> {
  const prepared = await preparePeers(r.log, { ours22: true });
  const work = temporaryFolder('dataset-rest-peers-');
  const comparisons: PeerComparison[] = [];
  comparisons.push(...(await against(() => startPlatformatic(r.db, join(work, 'platformatic')), `Platformatic DB ${VERSIONS.platformatic}`, r.dir, r.size, r)));
  comparisons.push(...(await against(() => startJsonServer(join(work, 'json-server'), r.small.size), `json-server ${VERSIONS.jsonServer}`, r.small.dir, r.small.size, r)));
  return { comparisons, versions: { 'Node.js (peers)': prepared.node22Version, 'Platformatic DB': VERSIONS.platformatic, 'json-server': VERSIONS.jsonServer } };
}

async function against(start: () => Promise<Peer>, name: string, dir: string, size: number, r: PeerRun): Promise<PeerComparison[]> {
  const [ours, peer] = await Promise.all([ourServerOnNode22(dir, { log: r.log }), start()]);
  const out: PeerComparison[] = [];
  try {
    for (const read of READS) {
      const route = peer.routes[read.peer];
      const base = { scenario: read.id, title: read.title, size, peer: name, node: peer.nodeVersion, target: name.startsWith('Platformatic') ? read.target : undefined };
      const note = peer.notes[read.peer];
      if (!route) {
        out.push({ ...base, ours: await loadOne({ server: { url: ours.url, pid: ours.pid }, path: read.ours }, read.range(size), r.load), note: note ?? 'cannot in one request' });
        r.log(`  ${name}, ${read.title}: cannot in one request`);
        continue;
      }
      const [o, p] = await loadBoth(
        { server: { url: ours.url, pid: ours.pid }, path: read.ours },
        { server: { url: peer.url, pid: peer.pid }, path: (n) => (route as (x: number | string) => string)(read.arg(n)) },
        read.range(size),
        r.load,
      );
      const c: PeerComparison = {
        ...base, ours: o, other: p, ratio: o.requestsPerSecond / p.requestsPerSecond,
        cpuRatio: o.cpuUsPerRequest && p.cpuUsPerRequest ? p.cpuUsPerRequest / o.cpuUsPerRequest : undefined, note,
      };
      r.log(`  ${name}, ${read.title}: ours ${o.requestsPerSecond.toFixed(0)} req/s, ${name} ${p.requestsPerSecond.toFixed(0)} req/s: ${c.ratio?.toFixed(2)}×${p.failures || o.failures ? ` (failures: ours ${o.failures}, peer ${p.failures})` : ''}`);
      out.push(c);
    }
  } finally {
    await Promise.all([ours.stop(), peer.stop()]);
  }
  return out;
}
