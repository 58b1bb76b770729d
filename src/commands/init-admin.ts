// The administrator `dataset-rest init --with-users` creates: its name and password, asked before
// anything is written, and checked as the built-in users' store checks them (a mistake costs no
// half-made project). On a terminal: the name (admin by default), then the password twice without
// echo. Otherwise (a script, a pipe): the name is --admin's, else admin, and the password stdin's
// first line (secret-input.ts, as `dataset-rest users add` reads it).

import { createInterface } from 'node:readline/promises';
import { checkName } from '../datastore/users/built-in-users.js';
import { checkPassword } from '../datastore/users/passwords.js';
import { isDatasetError } from '../errors/dataset-error.js';
import { io, UsageError } from './common.js';
import { readPassword } from './secret-input.js';

/** The shortest password, as the auth.json init writes says. */
export const MIN_PASSWORD_LENGTH = 8;
export const DEFAULT_ADMIN = 'admin';

export interface Administrator {
  readonly name: string;
  readonly password: string;
}

export async function askAdministrator(flagName: string | undefined): Promise<Administrator> {
  const terminal = io.stdin.isTTY === true;
  const typed = flagName ?? (terminal ? (await question(`administrator's user name (${DEFAULT_ADMIN}): `)) || DEFAULT_ADMIN : DEFAULT_ADMIN);
  const name = checked(() => checkName(typed));
  const password = await readPassword(`password for ${name} (${MIN_PASSWORD_LENGTH} characters or more): `, true);
  if (!terminal && password === '') throw new UsageError('--with-users: no password on stdin (give it as its first line, or run on a terminal to be asked)');
  checked(() => checkPassword(password, MIN_PASSWORD_LENGTH, terminal ? 'the password' : 'the password read from stdin'));
  return { name, password };
}

/** The store's refusal (a DatasetError) as the command's: exit code 2, nothing written. */
function checked<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (isDatasetError(e)) throw new UsageError(`--with-users: ${e.message} (nothing was written)`);
    throw e;
  }
}

/** A line typed on the terminal (shown: a user name is no secret). */
async function question(prompt: string): Promise<string> {
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  // (Ctrl-C in readline closes it without an answer)
  const interrupted = new Promise<never>((_, reject) => rl.once('SIGINT', () => {
    io.stderr.write('\n');
    reject(new UsageError('interrupted: nothing was written'));
  }));
  try {
    return (await Promise.race([rl.question(prompt), interrupted])).trim();
  } finally {
    rl.close();
  }
}
