// Answers made and sent a slice at a time (issue 34): a page or an entity longer than a slice is a
// stream of the very bytes the one-string answer had — the row path (collectionText of each row's
// text), the entity path (JSON.stringify of serialize.ts's objects), $asArray, one entity inlining
// thousands — made here the old way from the same reads and compared byte for byte; one no longer
// than a slice is still one string with its Content-Length. Compression, entity tags and 304, and
// HEAD stay right on a streamed answer. On both engines (test/run.ts).

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { ANSWER_SLICE_CHARS } from '../../src/config/limits.js';
import { coreOf, readGlobalStamp, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { fetchRelated } from '../../src/datastore/reads/fetch.js';
import { readPageRows } from '../../src/datastore/reads/page-read.js';
import { resolveProjection } from '../../src/datastore/reads/projection.js';
import { isExposed } from '../../src/model/types.js';
import { openProject } from '../../src/project/open.js';
import { encodedTag } from '../../src/rest/request/etag.js';
import { rowWriterFor } from '../../src/rest/present/row-writer.js';
import { collectionText, serializeAsArray, serializeCollection, serializeEntity } from '../../src/rest/present/serialize.js';
import { buildServer } from '../../src/http/server.js';
import { tempDir, testDatabase } from '../support/helpers.js';

const NOTES = 2400;
/** (fetch asks for br or gzip by default: these answers' lengths are of the text itself) */
const IDENTITY = { 'accept-encoding': 'identity' };
const FOLDERS = 12;

describe('answers made a slice at a time', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let base: string;
  const core = () => coreOf(ds);
  const classOf = (name: string) => core().classOf(core().model.dataClassesByName.get(name)!);

  before(async () => {
    const dir = join(tmp.dir, 'p');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify({
      name: 'Slices',
      dataClasses: [
        {
          name: 'Folder',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'name', type: 'string' },
            { name: 'notes', kind: 'relatedEntities', type: 'NoteSelection', path: 'folder' },
          ],
        },
        {
          name: 'Note',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'text', type: 'string' },
            { name: 'n', type: 'number' },
            { name: 'at', type: 'date' },
            { name: 'data', type: 'object' },
            { name: 'folder', kind: 'relatedEntity', type: 'Folder' },
            { name: 'siblings', kind: 'alias', path: 'folder.notes' },
          ],
        },
      ],
    }));
    ds = await openProject(dir, { db: await testDatabase(join(tmp.dir, 'p.sqlite')) });
    const d = ds as unknown as Record<string, any>;
    await ds.transaction(async () => {
      const folders = [];
      for (let f = 0; f < FOLDERS; f++) {
        const folder = d.Folder.new();
        folder.set('name', `folder ${f}`);
        await folder.save();
        folders.push(folder);
      }
      for (let i = 0; i < NOTES; i++) {
        const note = d.Note.new();
        // (texts that JSON escapes: quotes, controls, non-ASCII)
        note.set('text', `note ${i} "ünï" \n${'x'.repeat(150 + (i % 50))}`);
        note.set('n', i / 7);
        note.set('at', new Date(Date.UTC(2020, 0, 1) + i * 3_600_000));
        note.set('data', { i, tags: ['a', `t${i % 9}`], nested: { ok: i % 2 === 0 } });
        note.set('folder', folders[i % FOLDERS]);
        await note.save();
      }
    });
    app = await buildServer(ds, { logLevel: 'silent' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  /** A page of Notes as the row path wrote it in one string: collectionText over each row's text. */
  async function rowPage(top: number): Promise<string> {
    const dc = classOf('Note');
    const projection = resolveProjection(dc.model, {}, isExposed);
    const writer = rowWriterFor(projection, dc, core().storage.dialect)!;
    const { rows, count, globalStamp } = await readPageRows(dc.selectWhere(null, core().root), 0, top, writer.columns);
    return collectionText(dc.model, count, 0, rows.map((row) => writer.write(row)), { globalStamp });
  }

  /** A page of Notes with `attributes` as the entity path made it: JSON.stringify of serialize.ts's objects. */
  async function entityPage(top: number, attributes: string[], asArray = false): Promise<string> {
    const dc = classOf('Note');
    const projection = resolveProjection(dc.model, { attributes }, isExposed);
    const { rows, count, globalStamp } = await readPageRows(dc.selectWhere(null, core().root), 0, top, dc.columns);
    const fetched = await fetchRelated(core(), rows.map((row) => dc.entityFromValues(row, core().root)), projection, core().root);
    return JSON.stringify(asArray ? serializeAsArray(fetched, projection, { globalStamp }) : serializeCollection(dc.model, count, 0, fetched, projection, { globalStamp }));
  }

  it('streams a page of the row path longer than a slice: the bytes of the one-string answer, without Content-Length', async () => {
    const res = await fetch(`${base}/rest/Note?$top=${NOTES}`, { headers: IDENTITY });
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.ok(text.length > 2 * ANSWER_SLICE_CHARS, `${text.length} characters`);
    assert.equal(res.headers.get('content-length'), null);
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    assert.equal(text, await rowPage(NOTES));
  });

  it('sends a page no longer than a slice as one string, with its Content-Length, as before', async () => {
    const res = await fetch(`${base}/rest/Note?$top=50`, { headers: IDENTITY });
    const text = await res.text();
    assert.ok(text.length < ANSWER_SLICE_CHARS);
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
    assert.equal(text, await rowPage(50));
  });

  it('streams a page of the entity path (inline selections, each inline entity written in pieces) and of $asArray: the bytes JSON.stringify made of the whole', async () => {
    const nested = await app.inject({ method: 'GET', url: '/rest/Note?$top=40&$attributes=text,siblings.text,siblings.n,siblings.folder' });
    assert.equal(nested.statusCode, 200);
    assert.ok(nested.body.length > 2 * ANSWER_SLICE_CHARS, `${nested.body.length} characters`);
    assert.equal(nested.body, await entityPage(40, ['text', 'siblings.text', 'siblings.n', 'siblings.folder']));
    const flat = await app.inject({ method: 'GET', url: `/rest/Note?$top=${NOTES}&$attributes=text,data,folder.name` });
    assert.equal(flat.body, await entityPage(NOTES, ['text', 'data', 'folder.name']));
    const asArray = await app.inject({ method: 'GET', url: `/rest/Note?$top=${NOTES}&$asArray=true&$attributes=text,n,siblings` });
    assert.ok(asArray.body.length > 2 * ANSWER_SLICE_CHARS);
    assert.equal(asArray.body, await entityPage(NOTES, ['text', 'n', 'siblings'], true));
  });

  it('streams one entity inlining thousands (its inline selections\' entities in pieces): the bytes of the one-string answer', async () => {
    const url = '/rest/Folder(1)?$attributes=name,notes.text,notes.siblings.text';
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.length > 2 * ANSWER_SLICE_CHARS, `${res.body.length} characters`);
    const dc = classOf('Folder');
    const projection = resolveProjection(dc.model, { attributes: ['name', 'notes.text', 'notes.siblings.text'] }, isExposed);
    const entity = await dc.selectWhere(null, core().root).first();
    const [fetched] = await fetchRelated(core(), [entity!], projection, core().root);
    assert.equal(res.body, JSON.stringify(serializeEntity(fetched, projection, { globalStamp: await readGlobalStamp(core().root) }, true)));
    assert.equal(JSON.parse(res.body).notes.__ENTITIES[0].siblings.__ENTITIES.length, 100, 'an inline selection\'s first page');
  });

  it('compresses a streamed page (br, gzip) to the same bytes, with the tag of the encoding; answers 304 to its tag; HEAD has its headers and no body', async () => {
    const url = `/rest/Note?$top=${NOTES}`;
    const plain = await app.inject({ method: 'GET', url });
    const tag = String(plain.headers.etag);
    const br = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'br' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.etag, encodedTag(tag, 'br'));
    assert.equal(br.headers.vary, 'accept-encoding');
    assert.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body);
    const gz = await fetch(`${base}${url}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.equal(await gz.text(), plain.body, 'fetch decompresses gzip');
    // the client has it: 304, no body, the tag of the encoding it would have come in
    const unchanged = await app.inject({ method: 'GET', url, headers: { 'if-none-match': tag } });
    assert.equal(unchanged.statusCode, 304);
    assert.equal(unchanged.body, '');
    assert.equal(unchanged.headers.etag, tag);
    const unchangedBr = await app.inject({ method: 'GET', url, headers: { 'if-none-match': tag, 'accept-encoding': 'br' } });
    assert.equal(unchangedBr.statusCode, 304);
    assert.equal(unchangedBr.headers.etag, encodedTag(tag, 'br'));
    // HEAD: GET's headers, nothing more made or sent
    for (const encoding of [undefined, 'br']) {
      const headers = encoding ? { 'accept-encoding': encoding } : {};
      const get = await app.inject({ method: 'GET', url, headers });
      const head = await app.inject({ method: 'HEAD', url, headers });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      for (const name of ['content-type', 'etag', 'vary', 'content-encoding', 'cache-control']) assert.equal(head.headers[name], get.headers[name], `${name} (${String(encoding)})`);
    }
  });

  it('changes the tag of a streamed page when the data changes, and answers the new page in full', async () => {
    const url = `/rest/Note?$top=${NOTES}`;
    const before = await app.inject({ method: 'GET', url });
    const d = ds as unknown as Record<string, any>;
    const note = await d.Note.get(1);
    note.set('text', 'changed');
    await note.save();
    const after = await app.inject({ method: 'GET', url, headers: { 'if-none-match': String(before.headers.etag) } });
    assert.equal(after.statusCode, 200);
    assert.notEqual(after.headers.etag, before.headers.etag);
    assert.equal(JSON.parse(after.body).__ENTITIES[0].text, 'changed');
    assert.equal(after.body, await rowPage(NOTES));
  });
});
