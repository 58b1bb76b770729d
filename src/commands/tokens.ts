// dataset-rest tokens create|list|revoke: API tokens of built-in users (Authorization: Bearer),
// on the database the server uses (said on stderr). A new token is printed once, on stdout, and
// never again: the database keeps its hash only.

import { Command } from 'commander';
import { coreOf } from '../datastore/datastore.js';
import { isDatasetError } from '../errors/dataset-error.js';
import { actionCommand, dataCommand, databaseInWords, io, openForCommand, parseAction, runCommand, say, UsageError, type ProjectFlags } from './common.js';
import { usersOf } from './users.js';

interface TokensFlags extends ProjectFlags {
  user?: string;
  name?: string;
  privileges?: string;
  expires?: string;
  json?: boolean;
}

function command(): Command {
  const program = dataCommand('tokens', 'Manages the API tokens of built-in users: create, list, revoke.');
  const sub = (name: string, summary: string) => actionCommand(program, name, summary);
  sub('create', 'makes a token and prints it (once)')
    .requiredOption('--user <name>', 'the user it acts as')
    .option('--name <text>', 'what it is for (shown in listings)')
    .option('--privileges <list>', "comma-separated: some of the user's privileges (default: all it holds)")
    .option('--expires <when>', 'an ISO date (2027-01-31) or a number of days (30d); default: never, or auth.json\'s tokens.maxDays');
  sub('list', 'lists the tokens (never their secrets)').option('--user <name>', "one user's").option('--json', 'as JSON');
  sub('revoke', 'revokes a token, at once on every instance').argument('<id>');
  return program;
}

export async function main(args: readonly string[]): Promise<number> {
  const parsed = parseAction<TokensFlags>(command(), args);
  if (typeof parsed === 'number') return parsed;
  const { action, flags, args: [id] } = parsed;
  return runCommand(async (opened) => {
    const expires = expiry(flags.expires);
    say(`tokens: on ${databaseInWords(flags)}`);
    const ds = await openForCommand(flags, { withRoles: true });
    opened(ds);
    usersOf(ds);
    const tokens = coreOf(ds).tokens;
    if (!tokens) throw new UsageError('this project has no built-in users: add {"users": true} to its auth.json');
    try {
      switch (action.name()) {
        case 'create': {
          const made = await tokens.create({ userName: flags.user, name: flags.name, privileges: flags.privileges, expires });
          say(`made the token ${made.info.id} for ${made.info.userName} (${made.info.privileges.join(', ') || 'no privilege'}), ${made.info.expires === null ? 'without expiry' : `until ${made.info.expires}`}: it is shown this once`);
          io.stdout.write(`${made.token}\n`);
          break;
        }
        case 'list': {
          const list = await tokens.list(flags.user);
          if (flags.json) io.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
          else for (const t of list) io.stdout.write(`${t.id}\t${t.userName}\t${t.name}\t${t.privileges.join(',')}\t${t.expires ?? 'never'}\t${t.lastUsed ?? 'unused'}\n`);
          break;
        }
        case 'revoke':
          await tokens.revoke(id);
          say(`revoked ${id}`);
          break;
        default:
          throw new UsageError(`unknown action ${action.name()}`);
      }
    } catch (e) {
      if (isDatasetError(e)) throw new UsageError(e.message);
      throw e;
    }
    return 0;
  });
}

/** --expires: "30d" or "30" (days), or an ISO date; undefined: none given. */
function expiry(value: string | undefined): string | number | undefined {
  if (value === undefined) return undefined;
  const days = /^(\d+(?:\.\d+)?)d?$/.exec(value);
  if (days) return Number(days[1]);
  if (Number.isNaN(Date.parse(value))) throw new UsageError(`--expires: '${value}' is neither a number of days (30d) nor an ISO date (2027-01-31)`);
  return value;
}
