// Uploads, images and blobs over a real socket (spec "Upload", reference §2.6, §2.10, §3.4,
// §3.12, §3.22): POST /rest/$upload streams the body into the database; {"ID": …} attaches it in
// $method=update; the entity's deferred uri answers the bytes (type from the content, length,
// ETag, 304), converted by $imageformat or as a download with $binary; and every failure —
// too large, not an image, cut off, expired, reused — answers a clear error and leaves nothing.
// (A 256 MB blob, its memory measured: http-files-large.test.ts.)

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import type { DatastoreWithClasses } from '../../src/index.js';
import { coreOf } from '../../src/datastore/datastore.js';
import { buildServer } from '../../src/http/server.js';
import { BLOB_TABLE } from '../../src/storage/schema.js';
import { tempDir, openDemoProject, testDatabase } from '../support/helpers.js';

type Json = any;


/** A BMP: an image file-type knows, that sharp cannot read (so no conversion is possible). */
function bmp(): Buffer {
  const b = Buffer.alloc(58);
  b.write('BM', 0);
  b.writeUInt32LE(58, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(1, 18);
  b.writeInt32LE(1, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  b.writeUInt32LE(4, 34);
  return b;
}

describe('HTTP: uploads, images and blobs', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let base: string;
  let png: Buffer;
  const MAX = 2 * 1024 * 1024;

  before(async () => {
    ds = await openDemoProject({ db: await testDatabase(`${tmp.dir}/demo.sqlite`), roles: false });
    app = await buildServer(ds, { logLevel: 'silent', maxUploadBytes: MAX });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/rest`;
    png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#3366cc' } }).png().toBuffer();
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  const upload = async (query: string, body: Buffer, type = 'application/octet-stream') => {
    const res = await fetch(`${base}/$upload?${query}`, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': type } });
    return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
  };
  const update = async (body: unknown, query = '') => {
    const res = await fetch(`${base}/Employee?$method=update${query}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base.replace(/\/rest$/, '')}${path}`, { headers });
  const files = async () => Number((await coreOf(ds).storage.get(`SELECT COUNT(*) AS n FROM "${BLOB_TABLE}"`))?.n);
  const employee = async (filter = 'photo = null') => (await (await fetch(`${base}/Employee?$top=1&$filter="${filter}"`)).json() as Json).__ENTITIES[0];

  it('takes an image ($rawPict=true) and answers {"ID": 32 hex}', async () => {
    const res = await upload('$rawPict=true', png, 'image/png');
    assert.equal(res.status, 200);
    assert.match(res.body.ID, /^[0-9A-F]{32}$/);
    assert.deepEqual(Object.keys(res.body), ['ID']);
  });

  it('attaches an upload to an image attribute, then serves it: type from the content, length, ETag, 304', async () => {
    const { ID } = (await upload('$rawPict=true', png, 'application/octet-stream')).body;
    const e = await employee();
    const saved = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID } });
    assert.equal(saved.status, 200);
    const deferred = saved.body.photo.__deferred;
    assert.equal(deferred.image, true);
    assert.match(deferred.uri, new RegExp(`^/rest/Employee\\(${e.__KEY}\\)/photo\\?\\$imageformat=best&\\$version=\\d+&\\$expand=photo$`));
    const res = await get(deferred.uri);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-length'), String(png.length));
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.match(res.headers.get('content-security-policy') ?? '', /sandbox/);
    // what a session may see is for its browser's cache alone
    assert.equal(res.headers.get('cache-control'), 'private, no-cache');
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(png));
    const etag = res.headers.get('etag') as string;
    assert.match(etag, /^"\d+-stored"$/);
    const again = await get(deferred.uri, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal((await again.arrayBuffer()).byteLength, 0);
  });

  it('converts with $imageformat (png, jpeg, gif, tiff, any case), each with its own ETag', async () => {
    const e = await employee('photo != null');
    const uri = `/rest/Employee(${e.__KEY})/photo?$expand=photo`;
    const magic: Record<string, [string, number[]]> = { png: ['image/png', [0x89, 0x50]], JPEG: ['image/jpeg', [0xff, 0xd8]], gif: ['image/gif', [0x47, 0x49]], tiff: ['image/tiff', [0x49, 0x49]] };
    const tags = new Set<string>();
    for (const [format, [type, bytes]] of Object.entries(magic)) {
      const res = await get(`${uri}&$imageformat=${format}`);
      assert.equal(res.status, 200, format);
      assert.equal(res.headers.get('content-type'), type);
      const body = Buffer.from(await res.arrayBuffer());
      assert.equal(res.headers.get('content-length'), String(body.length));
      assert.deepEqual([...body.subarray(0, 2)], bytes, format);
      tags.add(res.headers.get('etag') as string);
    }
    assert.equal(tags.size, 4);
  });

  it('answers an empty 204 for an empty attribute and for a conversion that cannot be made', async () => {
    const empty = await employee();
    assert.equal((await get(`/rest/Employee(${empty.__KEY})/photo?$imageformat=best&$expand=photo`)).status, 204);
    const { ID } = (await upload('$rawPict=true', bmp())).body;
    const saved = await update({ __KEY: empty.__KEY, __STAMP: empty.__STAMP, photo: { ID } });
    const best = await get(saved.body.photo.__deferred.uri);
    assert.equal(best.headers.get('content-type'), 'image/bmp');
    const converted = await get(`/rest/Employee(${empty.__KEY})/photo?$imageformat=png&$expand=photo`);
    assert.equal(converted.status, 204);
    assert.equal((await converted.arrayBuffer()).byteLength, 0);
  });

  it('serves a blob as a download with $binary=true, and refuses $imageformat on it', async () => {
    const text = Buffer.from('%PDF-1.4\n% a tiny document\n');
    const { ID } = (await upload('$binary=true', text)).body;
    const e = await employee('resume = null');
    const saved = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, resume: { ID } });
    const deferred = saved.body.resume.__deferred;
    assert.equal(deferred.image, undefined);
    assert.match(deferred.uri, /\/resume\?\$binary=true&\$version=\d+&\$expand=resume$/);
    const res = await get(deferred.uri);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="resume.pdf"');
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(text));
    const refused = await get(`/rest/Employee(${e.__KEY})/resume?$imageformat=png`);
    assert.equal(refused.status, 400);
  });

  it('changes $version when the content changes, removes the replaced file, and clears with null', async () => {
    const e = await employee();
    const first = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID: (await upload('$rawPict=true', png)).body.ID } });
    const before = await files();
    const other = await sharp({ create: { width: 5, height: 5, channels: 3, background: '#000' } }).png().toBuffer();
    const second = await update({ __KEY: e.__KEY, __STAMP: first.body.__STAMP, photo: { ID: (await upload('$rawPict=true', other)).body.ID } });
    const version = (u: string) => new URL(u, 'http://x').searchParams.get('$version');
    assert.notEqual(version(second.body.photo.__deferred.uri), version(first.body.photo.__deferred.uri));
    assert.equal(await files(), before, 'the new file in, the replaced one out');
    const cleared = await update({ __KEY: e.__KEY, __STAMP: second.body.__STAMP, photo: null });
    assert.equal(cleared.body.photo, null);
    assert.equal(await files(), before - 1);
  });

  it('refuses an unknown, reused, wrong-kind or malformed id per entity, saving nothing', async () => {
    const e = await employee();
    const unknown = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID: '0'.repeat(32) } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.__ERROR[0].errCode, 7023);
    const { ID } = (await upload('$binary=true', Buffer.from('just text'))).body;
    const wrong = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID }, lastName: 'Changed' });
    assert.equal(wrong.body.__ERROR[0].errCode, 7025);
    assert.match(wrong.body.__ERROR[0].message, /Employee\.photo is an image attribute: it takes an upload made with \$rawPict=true, and upload [0-9A-F]{32} was made with \$binary=true/);
    const picture = (await upload('$rawPict=true', png)).body.ID;
    const blob = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, resume: { ID: picture } });
    assert.equal(blob.body.__ERROR[0].errCode, 7025);
    assert.match(blob.body.__ERROR[0].message, /Employee\.resume is a blob attribute: it takes an upload made with \$binary=true/);
    assert.notEqual((await ds.Employee.get(e.__KEY))?.get('lastName'), 'Changed');
    const image = (await upload('$rawPict=true', png)).body.ID;
    const a = await employee();
    assert.equal((await update({ __KEY: a.__KEY, __STAMP: a.__STAMP, photo: { ID: image } })).status, 200);
    const b = await employee();
    const reused = await update({ __KEY: b.__KEY, __STAMP: b.__STAMP, photo: { ID: image } });
    assert.equal(reused.body.__ERROR[0].errCode, 7023);
    const malformed = await update({ __KEY: b.__KEY, __STAMP: b.__STAMP, photo: { ID: 42 } });
    assert.equal(malformed.body.__ERROR[0].errCode, 7013);
  });

  it('answers the stored entity with the error of an upload it cannot attach, and gives an upload named twice in a batch to the first entity only', async () => {
    const e = await employee();
    const unknown = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID: 'a'.repeat(32) }, lastName: 'Never' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.__KEY, e.__KEY, 'the entity as stored');
    assert.equal(unknown.body.__STAMP, e.__STAMP);
    assert.notEqual(unknown.body.lastName, 'Never');
    assert.equal(unknown.body.__ERROR[0].errCode, 7023);
    const { ID } = (await upload('$rawPict=true', png)).body;
    const a = await employee();
    const b = await employee(`photo = null and ID != ${a.__KEY}`);
    const batch = await update([{ __KEY: a.__KEY, __STAMP: a.__STAMP, photo: { ID } }, { __KEY: b.__KEY, __STAMP: b.__STAMP, photo: { ID } }]);
    assert.equal(batch.status, 200);
    assert.equal(batch.body.__ENTITIES[0].__ERROR, undefined);
    const second = batch.body.__ENTITIES[1];
    assert.equal(second.__ERROR[0].errCode, 7023);
    assert.match(second.__ERROR[0].message, new RegExp(`no upload ${ID} is waiting to be attached \\(entity #2\\)`));
    assert.equal(second.__KEY, b.__KEY);
  });

  it('leaves an upload attachable when the $atomic batch that used it fails', async () => {
    const { ID } = (await upload('$rawPict=true', png)).body;
    const e = await employee();
    const failed = await update([{ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID } }, { lastName: 'X', salary: -5 }], '&$atomic=true');
    assert.notEqual(failed.status, 200);
    const again = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID } });
    assert.equal(again.status, 200);
  });

  it('removes the files of a dropped entity', async () => {
    const created = await update({ lastName: 'Temp', photo: { ID: (await upload('$rawPict=true', png)).body.ID }, resume: { ID: (await upload('$binary=true', Buffer.from('cv'))).body.ID } });
    const before = await files();
    const res = await fetch(`${base}/Employee(${created.body.__KEY})?$method=delete`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal(await files(), before - 2);
  });

  it('refuses bad uploads with a clear error and keeps nothing of them', async () => {
    const before = await files();
    const cases: [string, Buffer, number, RegExp][] = [
      ['$rawPict=true', Buffer.from('no image here'), 400, /announced as an image \(\$rawPict=true\), but its bytes are of no known format/],
      ['', png, 400, /say what the upload is: \$rawPict=true for an image, \$binary=true for any other file/],
      ['$rawPict=true&$binary=true', png, 400, /not both/],
      ['$binary=true&$top=1', png, 400, /\$upload takes \$rawPict, \$binary and \$timeout; \$top does not apply/],
      ['$binary=true', Buffer.alloc(0), 400, /the upload is empty/],
      ['$rawPict=true', Buffer.alloc(0), 400, /the upload is empty/],
      ['$binary=true&$timeout=604800', png, 400, /an upload waits at most 86400 seconds \(a day\)/],
      ['$binary=true&$timeout=soon', png, 400, /\$timeout/],
    ];
    const form = await upload('$binary=true', png, 'multipart/form-data; boundary=XYZ');
    assert.equal(form.status, 400);
    assert.match(form.body.__ERROR[0].message, /not a multipart form/);
    for (const [query, body, status, message] of cases) {
      const res = await upload(query, body);
      assert.equal(res.status, status, query);
      assert.match(res.body.__ERROR[0].message, message, query);
    }
    assert.equal(await files(), before);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await fetch(`${base}/$upload?$binary=true`, { method, ...(method === 'GET' ? {} : { body: new Uint8Array(png), headers: { 'content-type': 'application/octet-stream' } }) });
      assert.equal(res.status, 405, method);
    }
  });

  it('refuses an upload announced with Expect: 100-continue before the client sends it: past the limit, or with a bad option', async () => {
    const announce = (query: string, length: number, headers: Record<string, string> = {}) => new Promise<{ status?: number; continued: boolean; headers?: Record<string, unknown> }>((resolve) => {
      let continued = false;
      const req = httpRequest(`${base}/$upload?${query}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'content-length': String(length), expect: '100-continue', ...headers } });
      req.on('continue', () => (continued = true));
      req.on('response', (r) => {
        r.resume();
        r.on('end', () => resolve(Object.keys(headers).length > 0 ? { status: r.statusCode, continued, headers: r.headers } : { status: r.statusCode, continued }));
      });
      req.on('error', () => resolve({ continued }));
    });
    assert.deepEqual(await announce('$binary=true', MAX * 2), { status: 413, continued: false });
    // the refusal carries the request id and the security headers, as every answer
    const traced = await announce('$binary=true', MAX * 2, { 'x-request-id': 'upload-7' });
    assert.equal(traced.status, 413);
    assert.equal(traced.headers?.['x-request-id'], 'upload-7');
    assert.equal(traced.headers?.['x-content-type-options'], 'nosniff');
    // an option value that does not parse is known from the head alone too
    assert.deepEqual(await announce('$binary=maybe', 10), { status: 400, continued: false });
    assert.deepEqual(await announce('$binary=true&$nope=1', 10), { status: 400, continued: false });
  });

  it('keeps an upload that arrives slowly from the sweep, and sweeps chunks left without their file', async () => {
    const before = await files();
    const id = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${base}/$upload?$binary=true&$timeout=60`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += String(d)));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text).ID) : reject(new Error(text))));
      });
      req.write(Buffer.alloc(300 * 1024, 1));
      // a sweep that runs while the upload is still arriving, as late as an upload's whole $timeout
      setTimeout(() => void coreOf(ds).files.sweep(Date.now() + 61_000).then(() => req.end(Buffer.alloc(300 * 1024, 2)), reject), 100);
    });
    assert.equal((await coreOf(ds).files.findUpload(id))?.size, 600 * 1024);
    assert.equal(await files(), before + 1);
    const p = coreOf(ds).storage.dialect.sql.placeholder;
    await coreOf(ds).storage.run(`INSERT INTO "__dataset_blob_chunks" ("blob", "seq", "data") VALUES (987654321, 0, ${p(1)})`, [Buffer.from([0])]);
    await coreOf(ds).files.sweep();
    assert.equal(Number((await coreOf(ds).storage.get('SELECT COUNT(*) AS n FROM "__dataset_blob_chunks" WHERE "blob" = 987654321'))?.n), 0);
  });

  it('reads the prolog of a crafted near-SVG in linear time (no backtracking)', async () => {
    const evil = Buffer.from(`${'<!---->'.repeat(400)}x`);
    const res = await upload('$binary=true', evil);
    assert.equal(res.status, 200);
    assert.equal((await coreOf(ds).files.findUpload(res.body.ID))?.mime, 'application/octet-stream');
  });

  it('takes an SVG written with an XML prolog as an image', async () => {
    const svg = Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!-- Created with Inkscape -->\n<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>');
    const res = await upload('$rawPict=true', svg);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it('refuses to convert an image past the pixel limit (204), and sends SVG only as a download', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="20000" height="20000"><script>alert(1)</script><rect width="10" height="10"/></svg>');
    const { ID } = (await upload('$rawPict=true', svg)).body;
    const e = await employee();
    await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID } });
    const converted = await get(`/rest/Employee(${e.__KEY})/photo?$imageformat=png&$expand=photo`);
    assert.equal(converted.status, 204);
    const stored = await get(`/rest/Employee(${e.__KEY})/photo`); // no options: the bytes all the same
    assert.equal(stored.status, 200);
    assert.equal(stored.headers.get('content-type'), 'image/svg+xml');
    assert.equal(stored.headers.get('content-disposition'), 'attachment; filename="photo.svg"');
  });

  it('answers 413 for an announced length past --max-upload-size, before reading the body', async () => {
    const res = await upload('$binary=true', Buffer.alloc(MAX + 1));
    assert.equal(res.status, 413);
    assert.equal(res.body.__ERROR[0].errCode, 7016);
    assert.match(res.body.__ERROR[0].message, /more than the 2 MB this server accepts \(--max-upload-size\)/);
  });

  /** Sends a chunked upload (no length announced) of `total` bytes, optionally breaking off after `cutAfter`. */
  const chunked = (total: number, cutAfter?: number) => new Promise<{ status?: number; body?: Json; error?: string }>((resolve) => {
    const req = httpRequest(`${base}/$upload?$binary=true`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    let cut = false;
    req.on('error', (e) => {
      if (!cut) resolve({ error: e.message });
    });
    let sent = 0;
    const piece = Buffer.alloc(64 * 1024, 7);
    const pump = () => {
      while (sent < total) {
        if (cutAfter !== undefined && sent >= cutAfter) {
          cut = true;
          req.destroy();
          // the server notices and cleans up
          setTimeout(() => resolve({ error: 'cut' }), 300);
          return;
        }
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });

  it('answers 413 as soon as a chunked upload passes the limit, keeping nothing', async () => {
    const before = await files();
    const res = await chunked(MAX * 3);
    if (res.status !== undefined) {
      assert.equal(res.status, 413);
      assert.match(res.body.__ERROR[0].message, /larger than 2 MB, the most this server accepts/);
    } // else the server closed the connection while the client was still sending: also a refusal
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await files(), before);
  });

  it('keeps nothing of an upload the client breaks off', async () => {
    const before = await files();
    const res = await chunked(MAX, 512 * 1024);
    assert.equal(res.error, 'cut');
    assert.equal(await files(), before);
  });

  it('streams a large upload in and out unchanged', async () => {
    const big = Buffer.alloc(MAX - 1000);
    for (let i = 0; i < big.length; i += 4) big.writeUInt32LE((i * 2654435761) >>> 0, i);
    const { ID } = (await upload('$binary=true', big)).body;
    const e = await employee('resume = null');
    const saved = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, resume: { ID } });
    const res = await get(saved.body.resume.__deferred.uri);
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    const back = Buffer.from(await res.arrayBuffer());
    assert.equal(createHash('sha256').update(back).digest('hex'), createHash('sha256').update(big).digest('hex'));
  });

  it('answers a single Range with 206 and just those bytes, across chunks; 416 past the end; the whole file otherwise', async () => {
    const big = Buffer.alloc(700 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 256;
    const { ID } = (await upload('$binary=true', big)).body;
    const e = await employee('resume = null');
    const uri = (await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, resume: { ID } })).body.resume.__deferred.uri;
    const etag = (await get(uri)).headers.get('etag') as string;
    const cases: [string, number, number][] = [['bytes=0-9', 0, 9], ['bytes=262100-262200', 262100, 262200], ['bytes=-10', big.length - 10, big.length - 1], ['bytes=700000-', 700000, big.length - 1]];
    for (const [range, start, end] of cases) {
      const res = await get(uri, { range });
      assert.equal(res.status, 206, range);
      assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${big.length}`);
      assert.equal(res.headers.get('content-length'), String(end - start + 1));
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(big.subarray(start, end + 1)), range);
    }
    const past = await get(uri, { range: `bytes=${big.length}-` });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${big.length}`);
    assert.equal(((await past.json()) as Json).__ERROR[0].errCode, 7026);
    const whole: Record<string, string>[] = [{ range: 'bytes=0-1,5-6' }, { range: 'bytes=0-9', 'if-range': '"another"' }, { range: 'items=0-1' }, { range: 'bytes=5-3' }];
    for (const headers of whole) {
      const res = await get(uri, headers);
      assert.equal(res.status, 200, JSON.stringify(headers));
      assert.equal((await res.arrayBuffer()).byteLength, big.length);
    }
    assert.equal((await get(uri, { range: 'bytes=0-9', 'if-range': etag })).status, 206);
  });

  it('forgets an upload once its $timeout has passed', async () => {
    const { ID } = (await upload('$rawPict=true&$timeout=1', png)).body;
    await new Promise((r) => setTimeout(r, 1100));
    const e = await employee();
    const res = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID } });
    assert.equal(res.body.__ERROR[0].errCode, 7023);
    const before = await files();
    assert.ok((await coreOf(ds).files.sweep()) >= 1);
    assert.ok((await files()) < before);
  });

  it('shows the demo\'s seeded images', async () => {
    const company = (await (await fetch(`${base}/Company?$top=1&$filter="logo != null"`)).json() as Json).__ENTITIES[0];
    const res = await get(company.logo.__deferred.uri);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
  });
});

describe('HTTP: quotas of the uploads waiting for an entity', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  before(async () => {
    ds = await openDemoProject({ db: await testDatabase(`${tmp.dir}/quota.sqlite`), roles: false });
    app = await buildServer(ds, { logLevel: 'silent', pendingUploads: { count: 2, bytes: 2500 } });
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  const upload = (size: number, cookie?: string) => app.inject({ method: 'POST', url: '/rest/$upload?$binary=true', payload: Buffer.alloc(size, 7), headers: { 'content-type': 'application/octet-stream', ...(cookie ? { cookie } : {}) } });
  const waiting = async () => (await coreOf(ds).files.pending()).count;

  it("refuses a client's upload past its count or its bytes with 429 (7044, Retry-After), keeping nothing of it; another client has its own", async () => {
    assert.equal((await upload(1000)).statusCode, 200);
    // the bytes: 1000 + 2000 is past 2500 — refused as they arrive, nothing kept
    const tooBig = await upload(2000);
    assert.equal(tooBig.statusCode, 429, tooBig.body);
    assert.equal(tooBig.json().__ERROR[0].errCode, 7044);
    assert.match(tooBig.json().__ERROR[0].message, /does not fit in what is left of the pending uploads' quota/);
    assert.equal(await waiting(), 1);
    assert.equal((await upload(1000)).statusCode, 200);
    // the count: two wait already
    const third = await upload(10);
    assert.equal(third.statusCode, 429);
    assert.equal(third.headers['retry-after'], '60');
    assert.match(third.json().__ERROR[0].message, /this client has 2 uploads \(1.95 KB\) waiting for an entity, as many as one client may \(2 files, 2.44 KB\)/);
    assert.equal(await waiting(), 2);
    // a session is a client of its own (a guest's uploads count by its address)
    const login = await app.inject({ method: 'POST', url: '/rest/$directory/login', payload: ['alice', 'alice123'] });
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    assert.equal((await upload(10, cookie)).statusCode, 200, 'a logged-in session has quota of its own');
  });
});
