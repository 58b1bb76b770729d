// Lint setup: typescript-eslint's recommended rules over the whole tree, and the layering of src/
// written down as import restrictions, so that it holds (docs/architecture.md, "Layers").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The folders of src/, lowest first: each may import the ones before it, never the ones after it.
 * (Root modules — server, project, cli, index — compose them all.)
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
  // the actions (dataset-rest migrate|import|export): above everything, as the root modules
  ['commands'],
];

/** For each folder, the folders it may not import: every later layer, and its own layer's siblings. */
function layerRules() {
  return LAYERS.flatMap((layer, i) => layer.map((folder) => {
    const above = [...LAYERS.slice(i + 1).flat(), ...layer.filter((f) => f !== folder)];
    // (the top layer has nothing above it)
    if (above.length === 0) return {};
    const patterns = [{
      group: above.flatMap((f) => [`../${f}/*`, `../../${f}/*`, `../../../${f}/*`, `./${f}/*`]),
      message: `src/${folder}/ sits below these folders (the layers in eslint.config.js): move the code down, or pass it in`,
    }];
    // REST maps requests onto the datastore; it builds no query plan nodes (types may be named)
    if (folder === 'rest') patterns.push({ group: ['../query/plan.js', '../../query/plan.js', '../../../query/plan.js'], allowTypeImports: true, message: 'rest/ asks the datastore; plan nodes are built by query/ and the core' });
    return { files: [`src/${folder}/**/*.ts`], rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] } };
  }));
}

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
  {
    // Tests read parsed JSON answers; typing every answer would add noise, not safety.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
