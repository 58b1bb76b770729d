// The package's build, run by npm around `npm pack` and `npm publish` (never shipped, never needed
// to work in the checkout). docs/decisions.md, "The package (issue 18)":
//
//   node bin/pack.mjs prepack    compiles src/ to dist/ (tsconfig.build.json: .js and .d.ts), then
//                                points package.json's "exports" (and "main", "types") at dist/, as
//                                the tarball must say
//   node bin/pack.mjs postpack   puts the repository's values of those fields back
//
// The repository's package.json describes the checkout: "exports" is the TypeScript source, which
// the checkout runs through tsx (npm start, the tests, the demo's classes importing 'dataset-rest'),
// so nothing there ever waits for, or runs, a stale build. Only those three fields are rewritten,
// and put back field by field (an edit made to another field meanwhile is kept); an interrupted
// pack is undone by the next one.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MANIFEST = join(ROOT, 'package.json');
/** the repository's values while a pack is under way (node_modules is never packed) */
const SAVED = join(ROOT, 'node_modules', '.cache', 'dataset-rest-pack.json');
const FIELDS = ['main', 'types', 'exports'];

/** What the package says: ES modules and their declarations, from dist/. */
const PACKAGE_FIELDS = {
  main: './dist/index.js',
  types: './dist/index.d.ts',
  exports: {
    '.': {
      types: './dist/index.d.ts',
      import: './dist/index.js',
      // require('dataset-rest'): a TypeScript class of a project outside an ES-module package is
      // loaded by tsx as CommonJS, and Node (20.19 and later) requires an ES module without
      // top-level await, as this one is
      default: './dist/index.js',
    },
    './package.json': './package.json',
  },
};

function readManifest() {
  return JSON.parse(readFileSync(MANIFEST, 'utf8'));
}

/** Writes the manifest as npm does (two spaces, a final newline): a field changed, the rest as it was. */
function writeManifest(manifest) {
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}

function setFields(manifest, values) {
  for (const field of FIELDS) {
    if (values[field] === undefined) delete manifest[field];
    else manifest[field] = values[field];
  }
}

/** Puts the repository's fields back, if a pack changed them. */
function restore() {
  if (!existsSync(SAVED)) return false;
  const manifest = readManifest();
  setFields(manifest, JSON.parse(readFileSync(SAVED, 'utf8')));
  // (the key order of the repository's file: a field that was absent is added back at the end, and absent there too)
  writeManifest(manifest);
  rmSync(SAVED);
  return true;
}

function build() {
  rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/main.js']) {
    if (!existsSync(join(ROOT, file))) throw new Error(`bin/pack.mjs: the build made no ${file}`);
  }
}

const step = process.argv[2];
if (step === 'prepack') {
  if (restore()) process.stderr.write('bin/pack.mjs: package.json had been left as an interrupted pack wrote it; put back first\n');
  build();
  const manifest = readManifest();
  mkdirSync(dirname(SAVED), { recursive: true });
  writeFileSync(SAVED, JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, manifest[f]]))));
  setFields(manifest, PACKAGE_FIELDS);
  writeManifest(manifest);
} else if (step === 'postpack') {
  restore();
} else {
  process.stderr.write('usage: node bin/pack.mjs prepack|postpack (npm pack runs them)\n');
  process.exitCode = 2;
}
