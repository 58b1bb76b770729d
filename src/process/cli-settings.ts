// The command's settings from three sources besides its flags: DATASET_REST_* environment
// variables and a configuration file (dataset-rest.json in the project folder, or the file
// --config names; JSON with comments). Flags win, then the environment, then the file, then the
// defaults. Every value goes through the same parser as its flag (the option's own parseArg), and
// lands in the commander program with its source ('cli', 'env', 'config', 'default'), so the
// command reads one set of options whatever their origin. The supervisor's server processes get
// the resolved settings as they are (snapshot(), over IPC: src/process/supervisor.ts), never reading the
// file or the variables again.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { InvalidArgumentError, type Command, type Option } from 'commander';
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { didYouMean } from '../util/suggest.js';

export const ENV_PREFIX = 'DATASET_REST_';
/** The configuration file looked for in the project folder. */
export const CONFIG_FILE = 'dataset-rest.json';
/**
 * Variables of the prefix that are no settings: the supervisor's (INSTANCE…), the test runner's
 * (TEST_…), the benchmarks' (BENCH_…, PEERS_…). Never warned about.
 */
const INTERNAL_ENV = /^DATASET_REST_(?:INSTANCE|TEST|BENCH|PEERS)(?:_|$)/;
/** scheme:// (a database URL): never a path to resolve */
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
/** What an environment variable may say for a flag without a value. */
const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off'];
const MASK = '***';

/** A value the command cannot use, from the environment or a file: the message names where it came from. */
export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** Where a setting's value came from, as --print-config shows it. */
export type Source = 'flag' | 'env' | 'file' | 'default';

export interface SettingsSpec {
  /** the attribute names of options that are actions, not settings (--print-config): flags only */
  readonly actions: readonly string[];
  /** options holding a list: a file may give an array (or a comma-separated string) */
  readonly lists: readonly string[];
  /**
   * options holding a path: a relative one in a file is taken from the file's folder (a URL,
   * `none` and `:memory:` are left as they are)
   */
  readonly paths: readonly string[];
  /** the option naming the configuration file (settable by flag and environment only) */
  readonly configKey: string;
  /** the option naming the project folder, where the file is looked for (settable there only through --config's file) */
  readonly projectKey: string;
  /** the project folder without --project */
  readonly defaultProject: string;
  /** shown by describe() for options left unset (what the command does then) */
  readonly unset?: Readonly<Record<string, string>>;
}

export interface Resolved {
  /** the configuration file read, or looked for; found false: there was none (only the project's file may be absent) */
  readonly file: { readonly path: string; readonly found: boolean };
  /** for each option set by a variable or a file: the variable's name, or the file's path */
  readonly origins: ReadonlyMap<string, string>;
  /** unknown DATASET_REST_* variables, said once on stderr */
  readonly warnings: readonly string[];
}

/** The environment variable of an option: DATASET_REST_ and its flag in upper snake case (a --no- flag without its no-). */
export function envName(option: Option): string {
  return ENV_PREFIX + option.attributeName().replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

/** The options a variable or a file may set. */
function settings(program: Command, spec: SettingsSpec): Option[] {
  return program.options.filter((o) => o.long !== undefined && !spec.actions.includes(o.attributeName()));
}

/** A flag without a value (--trust-proxy, --no-explorer): its setting is true or false. */
function isSwitch(option: Option): boolean {
  return !option.required && !option.optional;
}

/** Not set by a flag, nor by anything before: a variable or the file may set it. */
function open(program: Command, key: string): boolean {
  const source = program.getOptionValueSource(key);
  return source === undefined || source === 'default';
}

/**
 * Fills the options no flag set from the environment, then from the configuration file, each
 * value through its option's parser (errors: SettingsError naming the variable or the file, its
 * line and the key). Call after program.parse().
 */
export function resolveSettings(program: Command, spec: SettingsSpec, env: NodeJS.ProcessEnv = process.env): Resolved {
  const options = settings(program, spec);
  const origins = new Map<string, string>();

  // the environment: every variable given is checked, even one a flag overrides
  const known = new Map(options.map((o) => [envName(o), o]));
  const actions = new Map(program.options.filter((o) => spec.actions.includes(o.attributeName())).map((o) => [envName(o), o.long ?? o.flags]));
  for (const [name, option] of known) {
    const raw = env[name];
    // (an empty variable is an unset one: compose files write VAR: ${X:-})
    if (raw === undefined || raw === '') continue;
    const value = isSwitch(option) ? switchValue(raw, name) : parseWith(option, raw, name);
    const key = option.attributeName();
    if (open(program, key)) {
      program.setOptionValueWithSource(key, value, 'env');
      origins.set(key, name);
    }
  }
  const warnings = Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name) && !INTERNAL_ENV.test(name) && env[name] !== '')
    .sort()
    .map((name) => unknownVariable(name, [...known.keys()], actions));

  // the file: --config's (which must exist), else the project's (which may not)
  const named = program.getOptionValue(spec.configKey) as string | undefined;
  const path = named ?? join((program.getOptionValue(spec.projectKey) as string | undefined) ?? spec.defaultProject, CONFIG_FILE);
  const configOption = options.find((o) => o.attributeName() === spec.configKey);
  const configName = program.getOptionValueSource(spec.configKey) === 'env' && configOption ? envName(configOption) : `--${spec.configKey}`;
  const text = readText(path, named === undefined ? undefined : configName);
  if (text === undefined) return { file: { path, found: false }, origins, warnings };
  for (const [key, value] of readFile(text, path, options, spec, named !== undefined)) {
    if (open(program, key)) {
      program.setOptionValueWithSource(key, value, 'config');
      origins.set(key, path);
    }
  }
  return { file: { path, found: true }, origins, warnings };
}

/** The variables that are settings (DATASET_REST_PORT, DATASET_REST_DB …; not the internal ones nor the actions'). */
export function settingVariables(program: Command, spec: SettingsSpec): string[] {
  return settings(program, spec).map(envName);
}

/** The settings as resolved, for the server processes (sent over IPC): values and where they came from. */
export function snapshot(program: Command, spec: SettingsSpec, resolved: Resolved): string {
  const entries = settings(program, spec).map((o) => {
    const key = o.attributeName();
    return [key, { value: program.getOptionValue(key), source: program.getOptionValueSource(key), origin: resolved.origins.get(key) }];
  });
  return JSON.stringify({ file: resolved.file, settings: Object.fromEntries(entries) });
}

/**
 * In a server process: the supervisor's settings (snapshot()), for every option its own flags
 * did not set (the supervisor adds --port for a port it picked). Neither the environment nor the
 * file is read again: a file changed since would otherwise give a replacement process other
 * settings than its siblings'.
 */
export function restoreSettings(program: Command, text: string): Resolved {
  const saved = JSON.parse(text) as { file: Resolved['file']; settings: Record<string, { value?: unknown; source?: string; origin?: string }> };
  const origins = new Map<string, string>();
  for (const [key, { value, source, origin }] of Object.entries(saved.settings)) {
    if (program.getOptionValueSource(key) === 'cli') continue;
    program.setOptionValueWithSource(key, value, source);
    if (origin !== undefined) origins.set(key, origin);
  }
  return { file: saved.file, origins, warnings: [] };
}

/** The value of a switch from a variable: true/false, 1/0, yes/no, on/off (any case). */
function switchValue(raw: string, name: string): boolean {
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  throw new SettingsError(`${name}: '${mask(raw)}' is invalid: true or false (also 1/0, yes/no, on/off)`);
}

/** A value through its option's parser (the flag's), or as it is for options without one. */
function parseWith(option: Option, raw: string, where: string, previous?: unknown): unknown {
  if (option.parseArg === undefined) return raw;
  try {
    return option.parseArg(raw, previous);
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw new SettingsError(`${where}: '${mask(raw)}' is invalid: ${e.message}`);
    throw e;
  }
}

function unknownVariable(name: string, known: readonly string[], actions: ReadonlyMap<string, string>): string {
  const action = actions.get(name);
  if (action !== undefined) return `${name} is not a setting: ${action} is a flag only (ignored)`;
  const positive = name.replace(/^DATASET_REST_NO_/, ENV_PREFIX);
  if (positive !== name && known.includes(positive)) return `${name} is not a setting: write ${positive}=false (ignored)`;
  return `${name} is not a setting${didYouMean(name, known)} (ignored)`;
}

/** The file's text; undefined when the project's file is absent (a file --config names must be there). */
function readText(path: string, namedBy: string | undefined): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && namedBy === undefined) return undefined;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : code === 'EACCES' ? 'not readable (permission denied)' : (e as Error).message;
    throw new SettingsError(`${namedBy ?? path}: cannot read the configuration file ${path}: ${why}`);
  }
}

/** The file's settings, parsed: key → value. */
function readFile(text: string, path: string, options: readonly Option[], spec: SettingsSpec, named: boolean): Map<string, unknown> {
  function fail(offset: number, problem: string): never {
    const { line, column } = lineColumn(text, offset);
    throw new SettingsError(`${path}:${line}:${column}: ${problem}`);
  }
  // (a byte-order mark is no JSON: a space keeps every offset)
  const source = text.charCodeAt(0) === 0xfeff ? ` ${text.slice(1)}` : text;
  const errors: ParseError[] = [];
  const root = parseTree(source, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  if (errors[0] !== undefined) fail(errors[0].offset, `invalid JSON: ${words(printParseErrorCode(errors[0].error))}`);
  // an empty file (or comments only) sets nothing
  if (root === undefined) return new Map();
  if (root.type !== 'object') fail(root.offset, `the file must hold a JSON object of settings ({ "port": 8080, … }), found ${kindOf(root)}`);

  const byKey = new Map(options.map((o) => [o.attributeName(), o]));
  const accepted = [...byKey.keys()].filter((k) => k !== spec.configKey && (named || k !== spec.projectKey));
  const values = new Map<string, unknown>();
  for (const property of root.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    if (keyNode === undefined || valueNode === undefined) continue; // (refused above as a syntax error)
    const key = String(keyNode.value);
    const at = `"${key}"`;
    if (key === spec.configKey) fail(keyNode.offset, `${at} cannot be set in a configuration file (use the --${key} flag or ${ENV_PREFIX}${key.toUpperCase()})`);
    if (key === spec.projectKey && !named) fail(keyNode.offset, `${at} cannot be set in the project folder's own ${CONFIG_FILE} (give --${key}, or keep the configuration elsewhere and name it with --${spec.configKey})`);
    const option = byKey.get(key);
    if (option === undefined) {
      // a flag's name as written on the command line: its key is in camelCase
      const camel = key.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      const hint = accepted.includes(camel) ? `, did you mean '${camel}'?` : didYouMean(key, accepted);
      fail(keyNode.offset, `${at} is not a setting${hint} (settings: ${accepted.join(', ')})`);
    }
    if (values.has(key)) fail(keyNode.offset, `${at} is given twice`);
    values.set(key, fileValue(option, valueNode, at, spec, dirname(path), fail));
  }
  return values;
}

/** A value from the file, through the option's parser; relative paths from the file's folder. */
function fileValue(option: Option, node: Node, at: string, spec: SettingsSpec, dir: string, fail: (offset: number, problem: string) => never): unknown {
  const key = option.attributeName();
  const parse = (raw: string, previous?: unknown): unknown => {
    try {
      return parseWith(option, raw, at, previous);
    } catch (e) {
      if (e instanceof SettingsError) fail(node.offset, e.message);
      throw e;
    }
  };
  if (isSwitch(option)) {
    if (node.type !== 'boolean') fail(node.offset, `${at} must be true or false, found ${kindOf(node)}`);
    return node.value as boolean;
  }
  if (spec.lists.includes(key) && node.type === 'array') {
    const items = node.children ?? [];
    if (items.length === 0) fail(node.offset, `${at} is an empty list (leave it out for the default)`);
    let list: unknown;
    for (const item of items) {
      if (item.type !== 'string') fail(item.offset, `${at} must be a list of strings, found ${kindOf(item)} in it`);
      list = parse(item.value as string, list);
    }
    return list;
  }
  if (node.type !== 'string' && node.type !== 'number') {
    fail(node.offset, `${at} must be ${spec.lists.includes(key) ? 'a list of strings or a comma-separated string' : 'a string or a number'}, found ${kindOf(node)}`);
  }
  let raw = String(node.value);
  if (spec.paths.includes(key) && !isAbsolute(raw) && !URL_LIKE.test(raw) && raw !== 'none' && raw !== ':memory:' && raw !== '') raw = resolve(dir, raw);
  return parse(raw);
}

/** Where each option's value came from, for --print-config. */
export function sourceOf(program: Command, key: string, resolved: Resolved): { source: Source; origin?: string } {
  switch (program.getOptionValueSource(key)) {
    case 'cli': return { source: 'flag', origin: program.options.find((o) => o.attributeName() === key)?.long };
    case 'env': return { source: 'env', origin: resolved.origins.get(key) };
    case 'config': return { source: 'file', origin: resolved.origins.get(key) };
    default: return { source: 'default' };
  }
}

/**
 * The resolved settings as an aligned table, one line each: setting (its key in the file), value
 * (secrets masked), source (flag --x, env DATASET_REST_X, file PATH, default).
 */
export function describe(program: Command, spec: SettingsSpec, resolved: Resolved): string {
  const rows = settings(program, spec).map((o) => {
    const key = o.attributeName();
    const value = program.getOptionValue(key) as unknown;
    const { source, origin } = sourceOf(program, key, resolved);
    const shown = value === undefined ? (isSwitch(o) ? 'false' : `(${spec.unset?.[key] ?? 'unset'})`) : show(key, value);
    return [key, shown, origin === undefined ? source : `${source} ${origin}`];
  });
  const header = ['setting', 'value', 'source'];
  const widths = [0, 1].map((i) => Math.max(header[i].length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2]}`.trimEnd();
  const file = `# file: ${resolved.file.path}${resolved.file.found ? '' : ' (none there)'}`;
  const order = '# flags win, then DATASET_REST_* variables, then the file, then the defaults';
  return [order, file, line(header), ...rows.map(line)].join('\n') + '\n';
}

function show(key: string, value: unknown): string {
  if (/password|secret|token/i.test(key)) return MASK;
  // (each of a list on its own: a list of URLs, --db-replica's, keeps its hosts readable)
  return Array.isArray(value) ? value.map((v) => mask(String(v))).join(',') : mask(String(value));
}

/**
 * A value with its secrets masked: the password of a URL (postgres://user:***@host/db), and query
 * parameters named like secrets (?sslpassword=***, ?token=***).
 */
export function mask(text: string): string {
  return text
    // (up to the last @: a password may hold @, /, ? and # — a URL that holds them unencoded is
    // refused at start-up, but --print-config is how one finds out; an @ in the query masks more)
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:).*@/is, `$1${MASK}@`)
    .replace(/([?&][^=&#]*(?:pass|secret|token|key)[^=&#]*=)[^&#]*/gi, `$1${MASK}`);
}

/** "CloseBraceExpected" → "close brace expected" */
function words(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

function kindOf(node: Node): string {
  switch (node.type) {
    case 'object': return 'an object';
    case 'array': return 'a list';
    case 'string': return 'a string';
    case 'number': return 'a number';
    case 'boolean': return String(node.value);
    case 'null': return 'null';
    default: return node.type;
  }
}

/** The 1-based line and column of an offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split(/\r\n|\r|\n/);
  return { line: before.length, column: [...before[before.length - 1]].length + 1 };
}
