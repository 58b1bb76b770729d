// Lint setup: typescript-eslint's recommended rules over the whole tree, and the layering of src/
// written down as import restrictions, so that it holds (docs/architecture.md, "Layers").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The folders of src/, lowest first: each may import the ones before it, never the ones after it.
 * (The two root modules — main, the command's entry, and index, the public API — compose them all.)
 */
const LAYERS = [
  ['config', 'util', 'errors'],
  ['model'],
  ['permissions'],
  ['query'],
  ['sql'],
  ['storage'],
  ['datastore'],
  ['functions'],
  ['classes', 'rest'],
  ['explorer'],
  // what composes the layers below: opening a project folder; the HTTP server and its plugins
  ['project', 'http'],
  // the process: the command's settings, the supervisor and its server processes
  ['process'],
  // the actions (dataset-rest migrate|import|export): above everything, as the root modules
  ['commands'],
];

/** For each folder, the folders it may not import: every later layer, and its own layer's siblings. */
function layerPatterns(folder, i, layer) {
  const above = [...LAYERS.slice(i + 1).flat(), ...layer.filter((f) => f !== folder)];
  // (the top layer has nothing above it)
  if (above.length === 0) return [];
  const patterns = [{
    group: above.flatMap((f) => [`../${f}/*`, `../../${f}/*`, `../../../${f}/*`, `./${f}/*`]),
    message: `src/${folder}/ sits below these folders (the layers in eslint.config.js): move the code down, or pass it in`,
  }];
  // REST maps requests onto the datastore; it builds no query plan nodes (types may be named)
  if (folder === 'rest') patterns.push({ group: ['../query/plan.js', '../../query/plan.js', '../../../query/plan.js'], allowTypeImports: true, message: 'rest/ asks the datastore; plan nodes are built by query/ and the core' });
  // ... and it asks the core through its public surface, not its files
  if (folder === 'rest') patterns.push({ group: ['../datastore/*', '../../datastore/*', '../../../datastore/*', '!../datastore/index.js', '!../../datastore/index.js', '!../../../datastore/index.js'], message: 'rest/ imports the core through its public surface only: src/datastore/index.ts (add what it needs there)' });
  return patterns;
}

/**
 * The parts of a folder (its sub-folders) and what each may import of the others: `imports`, and
 * `types` (only as types). A part imports no other part and none of the folder's root files unless
 * `root` says so (rest/'s root files, plugin and pipeline, compose its stages; datastore/'s, the
 * datastore and its dataclasses, are what every part works on). A part never imports the folder's
 * index.ts (the surface is for the layers above).
 */
// (webhooks is no stage of a request: it delivers the watches of webhooks.json, made of them all)
const STAGES = ['scope', 'request', 'plan', 'present', 'openapi', 'run', 'webhooks'];
const PARTS = {
  // the stages of a request, in order: each may import those before it
  rest: { root: false, parts: Object.fromEntries(STAGES.map((stage, i) => [stage, { imports: STAGES.slice(0, i) }])) },
  // the core's concerns
  datastore: {
    root: true,
    parts: {
      files: {},
      // (access reads a session's grants: sessions/session.ts and the modules it imports import no other part)
      access: { imports: ['selections', 'sessions'] },
      sessions: { imports: ['access'] },
      writes: { imports: ['access', 'entities', 'reads', 'sessions'] },
      entities: { imports: ['access', 'reads', 'sessions', 'writes'], types: ['selections'] },
      selections: { imports: ['access', 'writes'], types: ['entities', 'sets'] },
      sets: { imports: ['selections', 'sessions', 'writes'], types: ['access', 'entities'] },
      reads: { imports: ['access', 'entities', 'selections'], types: ['sessions', 'sets'] },
      // the changes of tracked dataclasses, read from the data (writes wake it through the core's CoreView)
      live: {},
      // built-in users, their API tokens (tokens hash as session tokens do)
      users: { imports: ['sessions'] },
    },
  },
};

/** What a file `depth` folders inside a part of `folder` may not import of the folder's other parts. */
function partPatterns(folder, part, depth) {
  const { root, parts } = PARTS[folder];
  const up = '../'.repeat(depth);
  const { imports = [], types = [] } = parts[part];
  const others = Object.keys(parts).filter((p) => p !== part);
  const message = `src/${folder}/${part}/ may import of src/${folder}/'s parts only ${[...imports, ...types.map((t) => `${t} (types)`)].join(', ') || 'none'} (eslint.config.js, PARTS)`;
  const patterns = [{ group: [`${up}index.js`, ...(root ? [] : [`${up}*.js`]), ...others.filter((p) => !imports.includes(p) && !types.includes(p)).map((p) => `${up}${p}/*`)], message }];
  if (types.length > 0) patterns.push({ group: types.map((p) => `${up}${p}/*`), allowTypeImports: true, message });
  return patterns;
}

function layerRules() {
  return LAYERS.flatMap((layer, i) => layer.flatMap((folder) => {
    const patterns = layerPatterns(folder, i, layer);
    const rule = (files, extra = []) => ({ files, rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...patterns, ...extra] }] } });
    if (patterns.length === 0) return [{}];
    const parts = PARTS[folder] ? Object.keys(PARTS[folder].parts) : [];
    return [
      rule([`src/${folder}/**/*.ts`]),
      ...parts.flatMap((part) => [
        rule([`src/${folder}/${part}/*.ts`], partPatterns(folder, part, 1)),
        rule([`src/${folder}/${part}/*/**/*.ts`], partPatterns(folder, part, 2)),
      ]),
    ];
  }));
}

/**
 * Engine knowledge lives in the dialects (src/sql/dialect*.ts) and the drivers (src/storage/
 * sqlite*.ts, postgres.ts, and open.ts, which picks one for `--db`): everywhere else in src/, code
 * is given the storage's dialect and asks it (a capability, a hook: Dialect's groups), so that an
 * engine is added or changed in its own files. Refused elsewhere: reading a dialect's name,
 * comparing a name with an engine's, importing an engine's package, dialect or driver.
 */
const ENGINE_FILES = ['src/sql/dialect*.ts', 'src/storage/sqlite.ts', 'src/storage/sqlite-space.ts', 'src/storage/postgres.ts', 'src/storage/open.ts', 'src/storage/replicas/*.ts'];
const ENGINE_MESSAGE = 'engine knowledge belongs in the dialects and drivers (eslint.config.js, ENGINE_FILES): ask the storage\'s dialect (a member of Dialect\'s groups; add one)';
const engineRules = {
  files: ['src/**/*.ts'],
  ignores: ENGINE_FILES,
  rules: {
    'no-restricted-imports': ['error', {
      paths: ['better-sqlite3', 'pg'].map((name) => ({ name, message: ENGINE_MESSAGE })),
      patterns: [{ regex: '(^|/)(dialect-sqlite|dialect-postgres|sqlite|sqlite-space|postgres)\\.js$', message: ENGINE_MESSAGE }],
    }],
    'no-restricted-syntax': ['error',
      { selector: "MemberExpression[property.name='name'][object.name='dialect']", message: ENGINE_MESSAGE },
      { selector: "MemberExpression[property.name='name'][object.property.name=/^(dialect|d)$/]", message: ENGINE_MESSAGE },
      { selector: "BinaryExpression[operator=/^[!=]==?$/]:has(> MemberExpression[property.name='name']):has(> Literal[value=/^(sqlite|postgres)$/])", message: ENGINE_MESSAGE },
      { selector: "SwitchStatement[discriminant.property.name='name'][discriminant.object.name=/^(d|dialect)$/]", message: ENGINE_MESSAGE },
    ],
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', 'tmp/', 'demo/data/', '.scratch/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  ...layerRules(),
  engineRules,
  {
    // Tests read parsed JSON answers; typing every answer would add noise, not safety.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
