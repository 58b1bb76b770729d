// Every shell example of README.md and docs/*.md runs as written against the demo. The convention
// (also in docs/development.md, "Examples that run"):
//
// - A ```sh (bash, console, shell) block that names the demo's address (http://127.0.0.1:8080 or
//   localhost:8080) is run, against the demo started here with its roles.json on a fresh copy of
//   its seeded database — on SQLite and on PostgreSQL (this file calls openDemo, so test/run.ts
//   runs it on both). The address is rewritten to the server's; the block runs as one bash script
//   in a temporary folder of its own, its commands in order, so a cookie jar (`-c jar -b jar`) or a
//   variable (`ETAG=$(curl …)`) made by one command serves the next ones; blocks share the
//   server, in document order, never a folder.
// - Every command (a line, with its `\` continuations) must exit 0, and every HTTP answer its curl
//   calls get must be below 400 — unless its comment names the status it answers, `# → 403`:
//   then its last answer must be exactly that; or the exit code it ends with, `# → exit 2`.
// - A shell block that names no server runs its commands (`npx dataset-rest …`, `dataset-rest …`)
//   as a checkout runs them on the built-in demo: the command of this checkout, on the demo (read,
//   never written) and a copy of its seeded database on the engine under test (DATASET_REST_DB),
//   in the block's own folder, under the same rules.
// - Any other shell block (installing, Docker, a project of your own, a stream that never ends, a
//   placeholder to fill in) says why it is not run on the line before its fence:
//   `<!-- not run: needs Docker -->`. Every shell block is run or says why not.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandsOf, documents, DOC_SERVER, readDocument, shellBlocks, type ShellBlock } from '../support/doc-blocks.js';
import { BIN, DEMO_DIR, openDemo, TEST_ENGINE, type DemoFixture } from '../support/helpers.js';
import { seededDemoDatabase } from '../support/seeded-demo.js';

const blocks = documents().flatMap(shellBlocks);
const runnable = blocks.filter((b) => b.notRun === undefined && b.talksToServer);
const commandBlocks = blocks.filter((b) => b.notRun === undefined && !b.talksToServer);

interface Outcome {
  readonly command: string;
  readonly expect?: number;
  readonly expectExit: number;
  readonly exit: number | undefined;
  readonly statuses: number[];
}

/**
 * Runs a block as one bash script in `dir`, against `port` (or, for a block of commands, the
 * environment `env`); each command's exit code and the statuses of its curl calls.
 */
async function runBlock(block: ShellBlock, dir: string, port: number, env: NodeJS.ProcessEnv = process.env): Promise<{ outcomes: Outcome[]; stdout: string; stderr: string }> {
  const commands = block.commands;
  const script = [
    // every answer's status on stderr, whatever the command does with its output
    `curl() { command curl -sS -w '%{stderr}DOCSTATUS %{http_code}\\n' "$@"; }`,
    // the command as a checkout runs it (npx finds the checkout's own), wherever the block runs
    `dataset-rest() { node ${JSON.stringify(BIN)} "$@"; }`,
    `npx() { if [ "$1" = dataset-rest ]; then shift; dataset-rest "$@"; else command npx "$@"; fi; }`,
    ...commands.flatMap((c, i) => [`printf 'DOCCMD ${i}\\n' >&2`, c.text.replace(DOC_SERVER, `127.0.0.1:${port}`), `printf 'DOCEXIT ${i} %s\\n' "$?" >&2`]),
  ].join('\n');
  writeFileSync(join(dir, 'block.sh'), script);
  try {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      execFile('bash', ['block.sh'], { cwd: dir, env, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (_error, out, err) => resolve({ stdout: String(out), stderr: String(err) }));
    });
    const outcomes: Outcome[] = commands.map((c) => ({ command: c.text, expect: c.expect, expectExit: c.exit, exit: undefined, statuses: [] }));
    let current = -1;
    for (const line of stderr.split('\n')) {
      let m: RegExpExecArray | null;
      if ((m = /^DOCCMD (\d+)$/.exec(line))) current = Number(m[1]);
      else if ((m = /^DOCSTATUS (\d+)$/.exec(line)) && current >= 0) outcomes[current].statuses.push(Number(m[1]));
      else if ((m = /^DOCEXIT (\d+) (\d+)$/.exec(line))) (outcomes[Number(m[1])] as { exit?: number }).exit = Number(m[2]);
    }
    return { outcomes, stdout, stderr: stderr.split('\n').filter((l) => !/^DOC(CMD|STATUS|EXIT) /.test(l)).join('\n') };
  } finally {
    rmSync(join(dir, 'block.sh'), { force: true });
  }
}

/** The faults of a block's outcomes, or an assertion that there are none. */
function assertRan({ outcomes, stdout, stderr }: Awaited<ReturnType<typeof runBlock>>): void {
  const faults = outcomes.flatMap((o) => {
    const f = fault(o);
    return f ? [`${o.command}\n    ${f}`] : [];
  });
  assert.deepEqual(faults, [], `stdout:\n${stdout.slice(-4000)}\nstderr:\n${stderr.slice(-4000)}`);
}

/** What is wrong with a command's outcome, or undefined. */
function fault(o: Outcome): string | undefined {
  if (o.exit !== o.expectExit) return `exited ${o.exit ?? '(never reached)'}${o.expectExit === 0 ? '' : `, its comment says ${o.expectExit}`}`;
  if (/\bcurl\b/.test(o.command) && o.statuses.length === 0) return 'made no HTTP request';
  if (o.statuses.includes(0)) return 'could not reach the server';
  if (o.expect !== undefined) {
    const last = o.statuses.at(-1);
    if (last !== o.expect) return `answered ${last}, its comment says ${o.expect}`;
    if (o.statuses.slice(0, -1).some((s) => s >= 400)) return `answered ${o.statuses.join(', ')}`;
    return undefined;
  }
  if (o.statuses.some((s) => s >= 400)) return `answered ${o.statuses.join(', ')} (mark an expected error with "# → ${o.statuses.find((s) => s >= 400)}")`;
  return undefined;
}

describe('the commands of a block: how the documents are read', () => {
  it('joins continuations, leaves out comment lines and reads the status a comment names', () => {
    assert.deepEqual(commandsOf("# a comment\nJ='x'\ncurl -s a \\\n  -d b   # → 401: a guest\n\ncurl c   # the answer: {…} → {\"ID\"}"), [
      { text: "J='x'", expect: undefined, exit: 0 },
      { text: 'curl -s a \\\n  -d b   # → 401: a guest', expect: 401, exit: 0 },
      { text: 'curl c   # the answer: {…} → {"ID"}', expect: undefined, exit: 0 },
    ]);
    assert.deepEqual(commandsOf('npx dataset-rest init x   # → exit 2: not empty'), [{ text: 'npx dataset-rest init x   # → exit 2: not empty', expect: undefined, exit: 2 }]);
  });
});

describe('every shell block of the README and docs/ is run or says why not', () => {
  it('finds the examples: most run against the demo, the others say why not', () => {
    const skipped = blocks.filter((b) => b.notRun !== undefined);
    assert.ok(runnable.length >= 10, `${runnable.length} blocks run against the server`);
    assert.ok(commandBlocks.length >= 1, `${commandBlocks.length} blocks of commands run`);
    assert.ok(skipped.every((b) => b.notRun!.length >= 8), 'a block not run says why');
    // (a line beside the test's other output: what ran and what was left out)
    const count = (bs: ShellBlock[]) => bs.reduce((n, b) => n + b.commands.length, 0);
    console.log(`# doc-commands: ${blocks.length} shell blocks: ${runnable.length} run against the server (${count(runnable)} commands), ${commandBlocks.length} of commands (${count(commandBlocks)}), ${skipped.length} not run`);
  });

  it('leaves no command to the demo inline in the text, where it would not be run', () => {
    const inline = documents().flatMap((file) => {
      let fence = false;
      return readDocument(file).split('\n').flatMap((line, i) => {
        if (/^\s*```/.test(line)) fence = !fence;
        return !fence && /`curl [^`]*(?:127\.0\.0\.1|localhost):8080/.test(line) ? [`${file}:${i + 1}`] : [];
      });
    });
    assert.deepEqual(inline, [], 'put these commands in a ```sh block');
  });
});

describe(`the documents' examples answer as written, on the demo (${TEST_ENGINE})`, () => {
  let demo: DemoFixture;
  let port: number;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
    await demo.app.listen({ host: '127.0.0.1', port: 0 });
    port = (demo.app.server.address() as AddressInfo).port;
  });
  after(() => demo?.close());

  for (const block of runnable) {
    it(`${block.file}:${block.line} (${block.commands.length} commands)`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dataset-rest-doc-'));
      try {
        assertRan(await runBlock(block, dir, port));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe(`the documents' commands run as written, on a copy of the demo (${TEST_ENGINE})`, () => {
  for (const block of commandBlocks) {
    it(`${block.file}:${block.line} (${block.commands.length} commands)`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dataset-rest-doc-'));
      try {
        // the built-in demo (read, never written: its database is elsewhere), on a copy of its seeded database
        const db = await seededDemoDatabase(TEST_ENGINE, join(dir, '.demo.sqlite'));
        const env: NodeJS.ProcessEnv = { ...process.env, DATASET_REST_DB: db };
        delete env.DATASET_REST_PROJECT;
        assertRan(await runBlock(block, dir, 0, env));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
