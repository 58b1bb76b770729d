// The suite's peers: other servers over the same data, started in one call each (README.md here).
//
//   const { node22 } = await preparePeers(console.log);      // installs into the cache once
//   const plt = await startPlatformatic(sqliteFile, workDir);  // a copy of our SQLite file
//   const js = await startJsonServer(workDir, 10_000);         // a JSON export of the model's rows
//   fetch(plt.url + plt.routes.filtered(prefix)) … plt.keysOf(body) … await plt.stop();
//   const ours = await ourServerOnNode22(projectDir);          // our server at Node 22 too

import { CACHE, NODE22, VERSIONS, ensureJsonServer, ensureNode22, ensurePlatformatic, nodeVersionOf, type Log } from './cache.js';
import { ensureOurs22 } from './ours22.js';

export type { Peer, PeerRoutes, ReadName } from './peer.js';
export { PAGE, jsonKeys, prefixRange } from './peer.js';
export { startPlatformatic, platformaticRoutes, preparePlatformaticCopy, type PreparedCopy } from './platformatic.js';
export { startJsonServer, jsonServerRoutes, writeJsonExport } from './json-server.js';
export { ourServerOnNode22, OURS22_DIR, type OursOnNode22, type OursOptions } from './ours22.js';
export { CACHE, NODE22, VERSIONS } from './cache.js';

export interface PreparedPeers {
  /** the path of the Node 22 binary */
  node22: string;
  /** its version, e.g. v22.23.3 */
  node22Version: string;
  /** the cache folder */
  cache: string;
  /** milliseconds each install took in this call (0: found in the cache) */
  installMs: Record<string, number>;
}

/**
 * Installs what the peers need into the cache (CACHE) when it is not there yet: Node 22,
 * Platformatic DB (built for Node 22), json-server, and with `ours22` our own dependencies for Node
 * 22 (else ourServerOnNode22 installs them on its first call). Idempotent; fails with npm's words
 * when the registry cannot be reached.
 */
export async function preparePeers(log: Log, options: { ours22?: boolean } = {}): Promise<PreparedPeers> {
  const installMs: Record<string, number> = {};
  installMs.node22 = (await ensureNode22(log)).ms;
  installMs.platformatic = (await ensurePlatformatic(log)).ms;
  installMs.jsonServer = (await ensureJsonServer(log)).ms;
  if (options.ours22) installMs.ours22 = (await ensureOurs22(log)).ms;
  const node22Version = await nodeVersionOf(NODE22);
  if (node22Version !== `v${VERSIONS.node22}`) throw new Error(`peers: ${NODE22} is ${node22Version}, not v${VERSIONS.node22}`);
  return { node22: NODE22, node22Version, cache: CACHE, installMs };
}
