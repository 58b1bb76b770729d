// The dataset-rest command: serves a project folder (by default the built-in demo) over HTTP.
// A contract other tools rely on: flag names, the ready line, exit code 2 for bad input. The
// command itself only supervises (src/process/supervisor.ts); the server runs in its child
// process. Its options (src/process/cli-options.ts) come from flags, DATASET_REST_* variables and
// a configuration file (src/process/cli-settings.ts); the child takes the supervisor's result as
// it is, over the IPC channel (never through its environment: it may hold a password).

import { MAX_TIMER_MS, SHUTDOWN_GRACE_MS, SHUTDOWN_KILL_MARGIN_MS } from '../config/limits.js';
import { CommanderError } from 'commander';
import { describe, resolveSettings, restoreSettings, SettingsError, settingVariables, snapshot, type Resolved } from './cli-settings.js';
import { commandLine, commandSettings, SETTINGS, type CommandOptions } from './cli-options.js';
import type { DatastoreWithClasses } from '../datastore/datastore.js';
import type { createLogger } from '../util/log.js';
import { INSTANCE_ENV, settingsFromSupervisor, supervise, SUPERVISED, type ReadyMessage } from './supervisor.js';
// (the server's own modules are imported by serve(): the supervisor, --help and --print-config load none of them)

/** A second stop signal within this long of the first is the same stop, not "stop now". */
const REPEAT_MS = 1_000;

function fail(message: string): never {
  process.stderr.write(`dataset-rest: ${message.replace(/[^\S\n]*\n\s*/g, ' ')}\n`);
  process.exit(2);
}

const program = commandLine();
try {
  program.parse();
} catch (e) {
  if (e instanceof CommanderError) {
    if (e.exitCode === 0) process.exit(0); // --help, --version
    fail(e.message.replace(/^error: /, ''));
  }
  throw e;
}
// then the environment and the configuration file (a server process: the supervisor's result)
// (INSTANCE_ENV=1: a server alone, which resolves its own; SUPERVISED: one the command started)
const marker = process.env[INSTANCE_ENV];
const instance = marker === '1' || marker === SUPERVISED;
let saved: string | undefined;
if (marker === SUPERVISED) {
  // the supervisor gone before it answered: there is no one to serve for
  process.once('disconnect', () => process.exit(0));
  saved = await settingsFromSupervisor().catch((e: unknown) => fail((e as Error).message));
}
let resolved: Resolved;
try {
  resolved = saved === undefined ? resolveSettings(program, SETTINGS) : restoreSettings(program, saved);
} catch (e) {
  if (e instanceof SettingsError) fail(e.message);
  throw e;
}
for (const warning of resolved.warnings) process.stderr.write(`dataset-rest: ${warning}\n`);
const opts = program.opts<CommandOptions>();
if (opts.printConfig) {
  process.stdout.write(describe(program, SETTINGS, resolved));
  process.exit(0);
}

const settings = commandSettings(opts);

if (instance) await serve();
else {
  // the server processes (this script, the same arguments) take these settings as they are, over
  // IPC; the variables that are settings stay out of their environment
  supervise(process.argv[1], process.argv.slice(2), {
    workers: settings.process.workers, host: settings.listen.host, port: settings.listen.port,
    settings: snapshot(program, SETTINGS, resolved), withoutEnv: settingVariables(program, SETTINGS),
    // the server's own drain time (shutdown() below), and a little more
    stopWithinMs: Math.min(settings.functions.timeoutMs + SHUTDOWN_GRACE_MS + SHUTDOWN_KILL_MARGIN_MS, MAX_TIMER_MS),
  });
}

/** Without roles.json every client may read, write and call everything: said at start-up, louder when the port is open to the network. */
function warnIfOpen(open: boolean, log: ReturnType<typeof createLogger>, port: number): void {
  if (!open) return;
  const { host } = settings.listen;
  const network = !['127.0.0.1', 'localhost', '::1'].includes(host);
  const where = network ? `on ${host}:${port}, open to the network` : `on ${host}:${port}`;
  log.warn(`the datastore is open: no roles.json in the project, so every client that reaches ${where} may read, change and delete every exposed entity and call every function (add a roles.json: see the README, "Sessions and permissions")`);
}

/** The server itself: what the supervisor runs in its child process. */
async function serve(): Promise<void> {
  // under the supervisor: if it goes away while this instance starts, there is no one to serve for
  const supervised = process.send !== undefined;
  const orphaned = () => supervised && !process.connected;
  if (supervised) process.once('disconnect', () => process.exit(0));
  if (orphaned()) process.exit(0); // gone before the listener was there
  const [{ ModelError }, { openProject, ProjectError }, { coreOf }, { eventErrorLogger }, { createLogger }, { serverWith }, { EXPLORER_PATH }, { SchemaError }, { StorageConfigError }, { watchdog }] = await Promise.all([
    import('../model/load-model.js'), import('../project/open.js'), import('../datastore/datastore.js'), import('../datastore/entities/events.js'), import('../util/log.js'), import('../http/server.js'),
    import('../explorer/routes.js'), import('../storage/schema.js'), import('../storage/open.js'), import('../functions/watchdog.js'),
  ]);
  const log = createLogger(settings.process.logLevel);
  let ds: DatastoreWithClasses;
  try {
    ds = await openProject(settings.project.dir, {
      ...settings.project,
      ...settings.datastore,
      // failures of events that cannot stop anything (touched, afterSave, afterDrop) go to the server's log
      onEventError: eventErrorLogger(() => log),
      // what the start changed in the database's schema, a line each
      onSchemaChange: (line) => log.info(`schema: ${line}`),
    });
  } catch (e) {
    if (e instanceof ModelError) fail(`${e.problems.length} problem(s) in the model: ${e.problems.join('; ')}`);
    if (e instanceof ProjectError || e instanceof SchemaError || e instanceof StorageConfigError) fail(e.message);
    // PostgreSQL refusing the schema's statements to the user the URL names (insufficient_privilege)
    if ((e as { code?: unknown }).code === '42501') fail(`--db: PostgreSQL refused to bring the schema in line: ${(e as Error).message} (the user needs the right to create and alter tables in its schema: GRANT CREATE ON SCHEMA …)`);
    fail(`cannot open the project: ${(e as Error).message}`);
  }

  const app = await serverWith(ds, settings, log);
  let address: string;
  try {
    address = await app.listen(settings.listen);
  } catch (e) {
    await ds.close();
    fail(`cannot listen on ${settings.listen.host}:${settings.listen.port}: ${(e as Error).message}`);
  }
  const { port: actual } = app.server.address() as { port: number };
  const host = settings.listen.host.includes(':') ? `[${settings.listen.host}]` : settings.listen.host;
  log.info({ address, project: settings.project.dir, explorer: settings.http.explorer ? `http://${host}:${actual}${EXPLORER_PATH}` : undefined }, 'listening');
  warnIfOpen(coreOf(ds).policy.isOpen, log, actual);
  if (settings.functions.exposeErrors) log.warn("--expose-errors: a function's unexpected exception is answered with its message and stack (for development: never on a server others reach)");
  const line = `dataset-rest listening on http://${host}:${actual}/rest`;
  // (under the supervisor, it prints the line once every worker listens)
  if (!supervised) process.stdout.write(`${line}\n`);
  if (orphaned()) process.exit(0);
  if (supervised) {
    process.send?.({ type: 'ready', port: actual, line } satisfies ReadyMessage);
    // a function stuck in code that never yields ends this instance; the supervisor starts another
    watchdog.action = 'exit';
  }

  let closingSince: number | undefined;
  async function shutdown(reason: string): Promise<void> {
    if (closingSince !== undefined) {
      // Ctrl-C or a service manager signals the whole process group: the same stop arrives twice
      // at once (directly, and through the supervisor). Only a later signal means "stop now".
      if (Date.now() - closingSince < REPEAT_MS) return;
      log.warn(`${reason} again: stopping now`);
      process.exit(1);
    }
    closingSince = Date.now();
    log.info(`${reason}: finishing in-flight requests`);
    // requests in flight get as long as a function call may take, and a little more
    setTimeout(() => {
      log.warn('in-flight requests did not finish in time: stopping now');
      process.exit(1);
    }, Math.min(settings.functions.timeoutMs + SHUTDOWN_GRACE_MS, MAX_TIMER_MS)).unref();
    await app.close(); // waits for in-flight requests
    await ds.close();
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM received'));
  process.on('SIGINT', () => void shutdown('SIGINT received'));
  process.removeAllListeners('disconnect');
  process.on('disconnect', () => void shutdown('the supervisor is gone'));
}
