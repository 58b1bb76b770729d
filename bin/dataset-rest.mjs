#!/usr/bin/env node
// The dataset-rest command. One rule (docs/decisions.md, "The package (issue 18)"): where src/ sits
// beside this folder — the repository — it runs the TypeScript sources through tsx, so the
// checkout has nothing to build; the package (npm pack) holds dist/ and no src/, and runs the
// JavaScript compiled from them. (User projects' TypeScript classes are loaded by tsx either way.)
import { existsSync } from 'node:fs';

const source = new URL('../src/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/main.js');
}
