// The administrator `dataset-rest init --with-users` creates: its name and password, asked before
// anything is written. On a terminal: the name (admin by default), then the password twice,
// without echo. Otherwise (a script, a pipe): the name is --admin's, else admin, and the password
// is stdin's first line.

import { createInterface } from 'node:readline/promises';
import { io, UsageError } from './common.js';

/** The shortest password, as the auth.json init writes says. */
export const MIN_PASSWORD_LENGTH = 8;
export const DEFAULT_ADMIN = 'admin';
/** Tries at a password the terminal gets before the command gives up. */
const TRIES = 3;

export interface Administrator {
  readonly name: string;
  readonly password: string;
}

/** Ctrl-C at a prompt: the command ends, nothing written. */
export class Interrupted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'Interrupted';
  }
}

export async function askAdministrator(flagName: string | undefined): Promise<Administrator> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const name = checkedName(flagName ?? DEFAULT_ADMIN);
    const password = firstLine(await readAll(stdin));
    if (password === '') throw new UsageError('--with-users: no password on stdin (give it as the first line, or run on a terminal to be asked)');
    const problem = passwordProblem(password);
    if (problem) throw new UsageError(`--with-users: the password read from stdin ${problem}`);
    return { name, password };
  }
  const name = flagName === undefined ? checkedName((await question(`administrator's user name (${DEFAULT_ADMIN}): `)) || DEFAULT_ADMIN) : checkedName(flagName);
  for (let i = 0; i < TRIES; i++) {
    const password = await hidden(`password for ${name} (${MIN_PASSWORD_LENGTH} characters or more): `);
    const problem = passwordProblem(password);
    if (problem) {
      io.stderr.write(`the password ${problem}\n`);
      continue;
    }
    if ((await hidden('the same password again: ')) === password) return { name, password };
    io.stderr.write('the two passwords differ\n');
  }
  throw new UsageError(`--with-users: no password after ${TRIES} tries (nothing was written)`);
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || /[\s\p{Cc}]/u.test(trimmed)) throw new UsageError(`--with-users: ${JSON.stringify(name)} is no user name (one word, no spaces)`);
  return trimmed;
}

function passwordProblem(password: string): string | undefined {
  return [...password].length < MIN_PASSWORD_LENGTH ? `is shorter than ${MIN_PASSWORD_LENGTH} characters` : undefined;
}

function firstLine(text: string): string {
  return text.split(/\r?\n/, 1)[0] ?? '';
}

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  let text = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) text += chunk as string;
  return text;
}

async function question(prompt: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: io.stderr });
  // (Ctrl-C in readline closes it without an answer)
  const closed = new Promise<never>((_, reject) => rl.once('SIGINT', () => reject(new Interrupted())));
  try {
    return (await Promise.race([rl.question(prompt), closed])).trim();
  } finally {
    rl.close();
  }
}

/** A line typed without echo (the terminal in raw mode: the characters are read, not shown). */
function hidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  io.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let text = '';
    const end = (newline = true) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      // (after Ctrl-C the command ends the line itself)
      if (newline) io.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          end();
          return resolve(text);
        }
        if (ch === '\u0003') {
          end(false);
          return reject(new Interrupted());
        }
        if (ch === '\u007f' || ch === '\b') text = [...text].slice(0, -1).join('');
        else if (ch >= ' ') text += ch;
      }
    };
    stdin.on('data', onData);
  });
}
