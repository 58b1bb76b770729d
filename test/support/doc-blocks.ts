// The documents' shell examples, read as the doc-commands test runs them: the fenced blocks of
// README.md and docs/*.md, each with the annotation before it and its commands (a command is a
// line, with its `\` continuations; comment-only lines are none), and the expected status a
// command's comment names (`# → 403`), or the exit code (`# → exit 2`). The convention is the doc-commands test's header's.

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md, then docs/*.md in name order: paths from the repository's root. */
export function documents(): string[] {
  return ['README.md', ...readdirSync(`${ROOT}docs`).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
}

export function readDocument(file: string): string {
  return readFileSync(`${ROOT}${file}`, 'utf8');
}

/** The fences whose code is shell. */
const SHELL = new Set(['sh', 'bash', 'console', 'shell', 'zsh']);

export interface DocCommand {
  /** the command as written (continuations joined), its comment included */
  readonly text: string;
  /** the status its comment says it answers (`→ 401`), else undefined: any status below 400 */
  readonly expect?: number;
  /** the exit code its comment says it ends with (`→ exit 2`), else 0 */
  readonly exit: number;
}

export interface ShellBlock {
  readonly file: string;
  /** 1-based line of the opening fence */
  readonly line: number;
  readonly code: string;
  /** the reason given by a `<!-- not run: … -->` just before the fence, if any */
  readonly notRun?: string;
  readonly commands: readonly DocCommand[];
  /** a command talks to the demo server (http://127.0.0.1:8080 or localhost:8080) */
  readonly talksToServer: boolean;
}

/** The demo server's address as the documents write it. */
export const DOC_SERVER = /\b(?:127\.0\.0\.1|localhost):8080\b/g;

/** `→ 401` in a command's trailing comment. */
const EXPECT = /#.*→\s*(\d{3})\b/;
/** `→ exit 2` in a command's trailing comment. */
const EXPECT_EXIT = /#.*→\s*exit\s+(\d+)\b/;

/** The commands of a block: lines joined at a trailing `\`, blank and comment-only lines left out. */
export function commandsOf(code: string): DocCommand[] {
  const out: DocCommand[] = [];
  let pending = '';
  for (const line of code.split('\n')) {
    if (pending === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line}\n`;
      continue;
    }
    const text = pending + line;
    pending = '';
    const m = EXPECT.exec(text);
    const e = EXPECT_EXIT.exec(text);
    out.push({ text, expect: m ? Number(m[1]) : undefined, exit: e ? Number(e[1]) : 0 });
  }
  if (pending !== '') out.push({ text: pending, exit: 0 });
  return out;
}

/** Every shell block of a document. */
export function shellBlocks(file: string): ShellBlock[] {
  const lines = readDocument(file).split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    if (SHELL.has(open[2])) {
      const code = lines.slice(i + 1, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n');
      let before = i - 1;
      while (before >= 0 && lines[before].trim() === '') before--;
      const note = before >= 0 ? /^\s*<!--\s*not run:\s*(.+?)\s*-->\s*$/.exec(lines[before]) : null;
      blocks.push({
        file, line: i + 1, code, notRun: note?.[1], commands: commandsOf(code), talksToServer: new RegExp(DOC_SERVER.source).test(code),
      });
    }
    i = end;
  }
  return blocks;
}
