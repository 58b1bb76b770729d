// dataset-rest migrate: brings a project's database in line with its model.json, as a server's
// start would, without serving: prints the plan (each change on a line) with --dry-run and changes
// nothing, else applies it in one transaction and prints what it did. The project and database
// are the server's (flags, environment, the project's dataset-rest.json: common.ts databaseOf),
// said on stderr before it starts. Exit codes: 0 done (or nothing to do, or a dry run whose plan
// can be applied), 1 the plan is refused (why, on stderr: nothing was changed), 2 bad usage (a
// flag, the project, the model, the database cannot be opened).

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CommanderError } from 'commander';
import { loadModelFile, ModelError } from '../model/load-model.js';
import { dryRunSchema, SchemaError, syncSchema, type SchemaStep } from '../storage/schema.js';
import { databaseTarget, openStorage, StorageConfigError } from '../storage/open.js';
import type { TransactionManager } from '../storage/transactions.js';
import { databaseInWords, databaseOf, dataCommand, projectDir, projectGiven, UsageError, type ProjectFlags } from './common.js';

interface MigrateOptions extends ProjectFlags {
  dryRun?: boolean;
}

function program() {
  return dataCommand('migrate', "Brings a project's database in line with its model.json (what a server's start does), printing each change.")
    .option('--dry-run', 'print the plan and change nothing (exit 1 when it would be refused, with why)')
    .addHelpText('after', '\nExit codes: 0 applied (or nothing to do; with --dry-run: the plan can be applied), 1 the plan is refused (nothing changed), 2 bad usage.\n')
    .configureOutput({ outputError: () => {}, writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) });
}

export async function main(args: readonly string[]): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const fail = (message: string, code: number) => {
    process.stderr.write(`dataset-rest: ${message}\n`);
    return code;
  };
  let options: MigrateOptions;
  try {
    options = program().parse(args, { from: 'user' }).opts<MigrateOptions>();
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : fail(`migrate: ${e.message.replace(/^error: /, '')}`, 2);
    throw e;
  }
  let storage: TransactionManager | undefined;
  try {
    // (the demo's model applied to a database named alone would remake it as the demo's)
    if (!projectGiven(options)) throw new UsageError('migrate needs the project whose model.json it applies: --project, $DATASET_REST_PROJECT, or a --config file naming one');
    const root = resolve(projectDir(options));
    const modelFile = join(root, 'model.json');
    if (!existsSync(modelFile)) throw new UsageError(`${modelFile} is missing: --project names a folder holding a model.json`);
    const model = await loadModelFile(modelFile);
    const target = databaseTarget(databaseOf(options) ?? join(root, 'data', 'data.sqlite'));
    // a new SQLite file is the server's to make: it seeds it too
    if (target.engine === 'sqlite' && target.file !== ':memory:' && !existsSync(target.file)) {
      throw new UsageError(`there is no database at ${resolve(target.file)}: start the server once to create (and seed) it, or name it with --db`);
    }
    process.stderr.write(`dataset-rest: migrate: on ${databaseInWords(options)}\n`);
    storage = await openStorage(target.engine === 'sqlite' ? { engine: 'sqlite', file: resolve(target.file) } : target);
    const lines = (steps: readonly SchemaStep[]) => steps.forEach((s) => out(`  ${s.description}`));
    if (options.dryRun) {
      const plan = await dryRunSchema(storage, model);
      if (plan.problems.length > 0) {
        if (plan.steps.length > 0) {
          out(`dry run: the plan (${plan.steps.length} change${plan.steps.length === 1 ? '' : 's'}) would be refused:`);
          lines(plan.steps);
        }
        return fail(`the plan would be refused (nothing was changed):\n  - ${plan.problems.join('\n  - ')}`, 1);
      }
      if (plan.steps.length === 0) out('dry run: nothing to change, the database is in line with the model');
      else {
        out(`dry run: ${plan.steps.length} change${plan.steps.length === 1 ? '' : 's'} to apply (nothing was changed):`);
        lines(plan.steps);
      }
      return 0;
    }
    const steps = await syncSchema(storage, model);
    if (steps.length === 0) out('nothing to change: the database is in line with the model');
    else {
      out(`applied ${steps.length} change${steps.length === 1 ? '' : 's'} (in one transaction):`);
      lines(steps);
    }
    return 0;
  } catch (e) {
    if (e instanceof SchemaError) return fail(`${e.message} (nothing was changed)`, 1);
    if (e instanceof ModelError) return fail(e.message, 2);
    if (e instanceof UsageError || e instanceof StorageConfigError) return fail(e.message, 2);
    return fail(`migrate failed (nothing was changed): ${(e as Error).message}`, 1);
  } finally {
    await storage?.close();
  }
}
