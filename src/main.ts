// The dataset-rest command's entry: `dataset-rest [options]` serves a project (src/process/cli.ts);
// `dataset-rest migrate|import|export|users|tokens …` are actions on a project's database, `dataset-rest init DIR` writes a new project; each a module of
// src/commands/ with flags of its own (`dataset-rest import --help`). Only the module asked for is
// loaded: serving never loads the actions, nor an action the server.

/** An action: runs with the arguments after its name; resolves to the process's exit code. */
export interface Action {
  main(args: readonly string[]): Promise<number>;
}

const ACTIONS: Record<string, () => Promise<Action>> = {
  migrate: () => import('./commands/migrate.js'),
  import: () => import('./commands/import.js'),
  export: () => import('./commands/export.js'),
  users: () => import('./commands/users.js'),
  tokens: () => import('./commands/tokens.js'),
  init: () => import('./commands/init.js'),
};

const name = process.argv[2];
const action = name !== undefined && Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
if (action) {
  process.exitCode = await (await action()).main(process.argv.slice(3));
} else if (name !== undefined && !name.startsWith('-')) {
  // a word where a command goes: serving takes no argument, so it is a command mistyped (the
  // server's own refusal, "too many arguments", named no command)
  const { closest } = await import('./util/suggest.js');
  const near = closest(name, Object.keys(ACTIONS));
  process.stderr.write(`dataset-rest: there is no command '${name}'${near ? ` (did you mean '${near}'?)` : ''}: the commands are ${Object.keys(ACTIONS).join(', ')} (dataset-rest <command> --help); without one, dataset-rest serves a project (dataset-rest --help)\n`);
  process.exitCode = 2;
} else {
  await import('./process/cli.js');
}
