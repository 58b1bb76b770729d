// The Data Explorer's bundle (explorer/, beside the server): built in memory by esbuild the first
// time a page asks for it, once per process, so the repository holds no generated file and
// `npm start` needs no build step. The page's HTML is a template the routes fill per answer (its
// CSP nonce); scripts and styles carry their content hash in their names, so they can be cached
// for good.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** the explorer's own folder */
export const EXPLORER_DIR = fileURLToPath(new URL('../../explorer/', import.meta.url));

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
  /** a strong ETag: the content's hash */
  readonly etag: string;
}

export interface ExplorerBundle {
  /** the page, with `{{nonce}}` where each answer puts its own */
  readonly html: string;
  /** by file name (`main-3F2A….js`) */
  readonly assets: ReadonlyMap<string, Asset>;
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

let building: Promise<ExplorerBundle> | undefined;

/** The bundle, built on first use; a failed build is tried again by the next caller. */
export function explorerBundle(assetPrefix: string): Promise<ExplorerBundle> {
  building ??= build(assetPrefix).catch((error: unknown) => {
    building = undefined;
    throw error;
  });
  return building;
}

async function build(assetPrefix: string): Promise<ExplorerBundle> {
  // (imported here: a server that never shows the explorer never loads esbuild)
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [`${EXPLORER_DIR}src/main.tsx`],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir: '/explorer-out',
    write: false,
    logLevel: 'silent',
    legalComments: 'eof',
  });
  // esbuild's service process is not needed once the bundle is built
  await esbuild.stop();
  const assets = new Map<string, Asset>();
  let script = '';
  let style = '';
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    const body = Buffer.from(file.contents);
    assets.set(name, { type: TYPES[extname(name)] ?? 'application/octet-stream', body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
    if (name.endsWith('.js')) script = name;
    else if (name.endsWith('.css')) style = name;
  }
  const template = await readFile(`${EXPLORER_DIR}index.html`, 'utf8');
  const html = template.replaceAll('{{script}}', `${assetPrefix}${script}`).replaceAll('{{style}}', `${assetPrefix}${style}`);
  return { html, assets };
}
