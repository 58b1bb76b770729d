// dataset-rest users add|passwd|roles|remove|list: the built-in users of a project (auth.json's
// "users"), on the database the server uses (--db, $DATASET_REST_DB, the project's
// dataset-rest.json, as the server picks it; said on stderr before anything is done). Passwords
// are asked on the terminal without echo, or read from stdin; never taken as a flag.

import { Command } from 'commander';
import { coreOf, type DatastoreWithClasses } from '../datastore/datastore.js';
import type { BuiltInUsers } from '../datastore/users/built-in-users.js';
import { isDatasetError } from '../errors/dataset-error.js';
import { actionCommand, dataCommand, databaseInWords, io, openForCommand, parseAction, runCommand, say, UsageError, type ProjectFlags } from './common.js';
import { readPassword } from './secret-input.js';

interface UsersFlags extends ProjectFlags {
  role?: string[];
  json?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((r) => r.trim()).filter(Boolean)];

function command(): Command {
  const program = dataCommand('users', "Manages the project's built-in users (auth.json's \"users\"): add, passwd, roles, remove, list.");
  const sub = (name: string, summary: string) => actionCommand(program, name, summary);
  sub('add', 'adds a user (the password is asked, or read from stdin)').argument('<name>').option('--role <role>', 'a role of roles.json (repeat it, or a comma-separated list)', collect);
  sub('passwd', "sets a user's password (asked, or read from stdin)").argument('<name>');
  sub('roles', "sets a user's roles").argument('<name>').option('--role <role>', 'a role of roles.json (repeat it, or a comma-separated list; none: no role)', collect);
  sub('remove', 'removes a user and its API tokens').argument('<name>');
  sub('list', 'lists the users and their roles').option('--json', 'as JSON');
  return program;
}

export async function main(args: readonly string[]): Promise<number> {
  const parsed = parseAction<UsersFlags>(command(), args);
  if (typeof parsed === 'number') return parsed;
  const { action, flags, args: [name] } = parsed;
  return runCommand(async (opened) => {
    say(`users: on ${databaseInWords(flags)}`);
    const ds = await openForCommand(flags, { withRoles: true });
    opened(ds);
    const users = usersOf(ds);
    try {
      await run(action.name(), users, name as string, flags);
    } catch (e) {
      if (isDatasetError(e)) throw new UsageError(e.message);
      throw e;
    }
    return 0;
  });
}

async function run(what: string, users: BuiltInUsers, name: string, flags: UsersFlags): Promise<void> {
  switch (what) {
    case 'add': {
      // (checked before the password is asked: a mistake costs no typing)
      if (await users.get(name)) throw new UsageError(`there is a user '${name}' already: dataset-rest users passwd ${name} sets its password`);
      const user = await users.add(name, await readPassword(`password for ${name}: `, true), flags.role ?? []);
      say(`added ${user.userName}${user.roles.length > 0 ? ` (${user.roles.join(', ')})` : ' (no role: give one with --role)'}`);
      return;
    }
    case 'passwd': {
      if (!(await users.get(name))) throw new UsageError(`there is no user '${name}'`);
      const user = await users.setPassword(name, await readPassword(`new password for ${name}: `, true));
      say(`set the password of ${user.userName}`);
      return;
    }
    case 'roles': {
      const user = await users.setRoles(name, flags.role ?? []);
      say(`${user.userName} has ${user.roles.length > 0 ? `the roles ${user.roles.join(', ')}` : 'no role'}`);
      return;
    }
    case 'remove': {
      const user = await users.remove(name);
      say(`removed ${user.userName} and its API tokens`);
      return;
    }
    case 'list': {
      const list = await users.list();
      if (flags.json) io.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      else for (const u of list) io.stdout.write(`${u.userName}\t${u.roles.join(',')}\t${u.created}\n`);
      return;
    }
    default:
      throw new UsageError(`unknown action ${what}`);
  }
}

/** The project's built-in users, or a UsageError saying how to turn them on. */
export function usersOf(ds: DatastoreWithClasses): BuiltInUsers {
  const users = coreOf(ds).users;
  if (!users) throw new UsageError('this project has no built-in users: add {"users": true} to its auth.json (beside model.json)');
  return users;
}
