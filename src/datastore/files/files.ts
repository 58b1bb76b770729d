// Picture and blob contents, stored with the data (so a backup, or a second server instance over
// the same database, sees them): a row per file and its bytes in chunks, written and read one
// chunk at a time, never whole in memory. A file no entity holds yet — an upload, or bytes user
// code stored — carries an expiry and is swept past it; saving it into an image or blob attribute
// claims it (in the save's transaction), and replacing or dropping it removes it, so each file
// belongs to one attribute of one entity. A file that fits one chunk (most uploads) is written once
// its last byte is in, complete: its row and its chunk, one commit where the engine's writer is
// in-process (SQLite), two statements elsewhere.

import { FILE_CHUNK, UPLOAD_LEASE_MS, UPLOAD_LEASE_RENEW_MS } from '../../config/limits.js';
import bytes from 'bytes';
import { fileTypeFromBuffer } from 'file-type';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Storage } from '../../storage/adapter.js';
import { reclaimSpace } from './reclaim-space.js';
import {
  claimFileRow, completeFile, deleteExpiredFile, deleteFile, deleteOrphanChunks, expiredFiles, fileRow, findUploadRow, insertCompleteFile, insertFile,
  insertFileChunk, readFileChunk, setFileExpiry, waitingFiles,
} from '../../storage/system-tables/files.js';

/** A stored file; an image or blob attribute holds one, by id. */
export interface StoredFile {
  readonly id: number;
  readonly mime: string;
  readonly size: number;
}

/** What an upload was announced as: an image ($rawPict) or any file ($binary). */
export type FileKind = 'image' | 'binary';

/** A stored file as info() reads it. */
export interface FileInfo extends StoredFile {
  readonly kind: FileKind;
  /** the id a client attaches it by while it waits (uploads only); null once an entity holds it */
  readonly upload: string | null;
}

/** An upload waiting for an entity. */
export interface PendingUpload extends StoredFile {
  readonly kind: FileKind;
  readonly expires: number;
}

export interface StoreOptions {
  /** by default: image when the content is one */
  readonly kind?: FileKind;
  /** how long, once complete, it waits for an entity to claim it before it is swept (milliseconds) */
  readonly expiresIn: number;
  /** the id a client attaches it by (uploads only) */
  readonly upload?: string;
  /** the type; by default read from the content (application/octet-stream when unknown) */
  readonly mime?: string;
  /** refuse more bytes than this (BODY_TOO_LARGE), checked as they arrive */
  readonly maxBytes?: number;
  /** who stores it (a session, a client address): the pending-upload quotas count by it */
  readonly owner?: string;
  /** the files (and bytes) that may wait for an entity at once, per owner and in all */
  readonly quota?: UploadQuota;
}

/** How many files, of how many bytes, may wait for an entity at once: one owner's, and everyone's. */
export interface UploadQuota {
  readonly perOwner: { readonly count: number; readonly bytes: number };
  readonly total: { readonly count: number; readonly bytes: number };
}


/** The first bytes file-type needs to know a format. */
const SNIFF_BYTES = 4100;

const OCTET_STREAM = 'application/octet-stream';

/** How often at most uploads sweep expired files (per process; the server's timer sweeps too). */
const UPLOAD_SWEEP_EVERY_MS = 1000;

export class FileStore {
  /** when uploads last swept (sweepForUpload) */
  #sweptForUpload = 0;
  /** the engine's writer is in-process (every write transaction excludes the others): a transaction costs no round trip there */
  readonly #inProcessWriter: boolean;

  constructor(private readonly storage: Storage) {
    this.#inProcessWriter = storage.dialect.concurrency.rowLock('t') === '';
  }

  /**
   * Stores bytes arriving as chunks, one stored chunk at a time (each its own short write, so a
   * slow upload never holds the database); bytes that fit one chunk are written once complete.
   * A failure — too many bytes, no image where one was announced, the source breaking off —
   * removes what was written, and rethrows.
   */
  async store(source: Uint8Array | AsyncIterable<Uint8Array>, given: StoreOptions): Promise<StoredFile> {
    // the quotas, before a byte is read: what is left of them bounds this file
    const options = given.quota ? { ...given, maxBytes: await this.#roomFor(given.quota, given.owner, given.maxBytes) } : given;
    // the file's row, written with its first chunk (undefined until then)
    let id: number | undefined;
    // what the first bytes are, whatever a caller says: a file is an image only if they are one
    let sniffed: string | undefined;
    let size = 0;
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let renewed = Date.now();
    /** the file, when it was written complete at once */
    let complete: StoredFile | undefined;
    /** the type given is the one served (a caller may know better than the first bytes); the kind is the content's: bytes that are no image never fill an image attribute */
    const finalRow = () => ({
      mime: options.mime ?? sniffed ?? OCTET_STREAM,
      size,
      upload: options.upload ?? null,
      kind: options.kind ?? (sniffed?.startsWith('image/') ? 'image' : 'binary'),
      expires: Date.now() + options.expiresIn,
    });
    const flush = async (final: boolean) => {
      while (pendingBytes >= FILE_CHUNK || (final && (pendingBytes > 0 || seq === 0))) {
        const all = Buffer.concat(pending, pendingBytes);
        const chunk = all.subarray(0, Math.min(FILE_CHUNK, all.length));
        if (options.kind === 'image' && size === 0) throw new DatasetError('INVALID_BODY', 'the upload is empty: send the image\'s bytes as the request body');
        if (sniffed === undefined) sniffed = await sniff(chunk);
        if (options.kind === 'image' && !sniffed.startsWith('image/')) {
          throw new DatasetError('NOT_AN_IMAGE', `the upload was announced as an image ($rawPict=true), but its bytes are ${sniffed === OCTET_STREAM ? 'of no known format' : `${sniffed}`}: send an image, or upload with $binary=true`);
        }
        const rest = all.subarray(chunk.length);
        if (id === undefined && final && rest.length === 0) {
          // all of it in one chunk: the file is written complete, row and bytes at once
          const row = finalRow();
          const made = await this.#inOneCommit(async () => {
            const file = await insertCompleteFile(this.storage, { ...row, created: Date.now(), owner: options.owner ?? null });
            id = file;
            await insertFileChunk(this.storage, file, 0, Buffer.from(chunk));
            return file;
          });
          complete = { id: made, mime: row.mime, size };
          seq = 1;
          pending = [];
          pendingBytes = 0;
          return;
        }
        // a file of several chunks: its row holds a lease while they arrive
        if (id === undefined) id = await insertFile(this.storage, options.mime ?? OCTET_STREAM, options.kind ?? 'binary', Date.now(), Date.now() + UPLOAD_LEASE_MS, options.owner ?? null);
        await insertFileChunk(this.storage, id, seq++, Buffer.from(chunk));

        pending = rest.length ? [rest] : [];
        pendingBytes = rest.length;
        if (final && pendingBytes === 0) break;
      }
    };
    try {
      for await (const piece of source instanceof Uint8Array ? [source] : source) {
        size += piece.length;
        if (options.maxBytes !== undefined && size > options.maxBytes) {
          if (options.maxBytes < (given.maxBytes ?? Infinity)) throw quotaSpent(`the upload does not fit in what is left of the pending uploads' quota (${bytes.format(options.maxBytes, { unitSeparator: ' ' })})`);
          throw new DatasetError('BODY_TOO_LARGE', `the upload is larger than ${bytes.format(options.maxBytes, { unitSeparator: ' ' })}, the most this server accepts (--max-upload-size)`);
        }
        pending.push(Buffer.from(piece.buffer, piece.byteOffset, piece.length));
        pendingBytes += piece.length;
        await flush(false);
        // a slow but steady client keeps its lease, whether or not a whole chunk has arrived
        // (nothing written yet, nothing to keep)
        if (id !== undefined && Date.now() - renewed > UPLOAD_LEASE_RENEW_MS) {
          renewed = Date.now();
          await setFileExpiry(this.storage, id, renewed + UPLOAD_LEASE_MS);
        }
      }
      await flush(true);
      if (complete) return complete;
      const row = finalRow();
      const done = await completeFile(this.storage, id as number, row);
      // swept meanwhile (its lease ran out: a client silent for LEASE_MS): nothing to answer with
      if (done === 0) throw new DatasetError('INVALID_BODY', 'the upload took too long between two pieces and was dropped: send it again');
      return { id: id as number, mime: row.mime, size };
    } catch (e) {
      if (id !== undefined) await this.remove(id).catch(() => undefined);
      throw e;
    }
  }

  /**
   * Runs a file's few statements as one commit where the engine's writer is in-process (SQLite:
   * one commit instead of one per statement); elsewhere one after the other, each on its own (no
   * BEGIN and COMMIT round trips: a failure between them is cleaned up by store()'s remove, and a
   * crash leaves a row no client was given the id of, swept when it expires).
   */
  #inOneCommit<T>(fn: () => Promise<T>): Promise<T> {
    return this.#inProcessWriter ? this.storage.transaction(fn) : fn();
  }

  /** The upload a client attaches by id, if it is complete and not expired. */
  async findUpload(upload: string, now = Date.now()): Promise<PendingUpload | undefined> {
    const row = await findUploadRow(this.storage, upload, now);
    return row ? { ...row, kind: row.kind as FileKind } : undefined;
  }

  /** Gives a waiting file to an entity (call inside the save's transaction): fails when it expired or another entity took it. */
  async claim(id: number, where: string, now = Date.now()): Promise<void> {
    if ((await claimFileRow(this.storage, id, now)) === 0) {
      throw new DatasetError('UPLOAD_NOT_FOUND', `${where}: the file is no longer waiting to be attached: it expired, or another entity holds it`);
    }
  }

  /** The type, size and kind of a stored file, and the upload id it waits under (null once an entity holds it). */
  info(id: number): Promise<FileInfo | undefined> {
    return fileRow(this.storage, id) as Promise<FileInfo | undefined>;
  }

  /** The bytes of a stored file, one stored chunk (of FILE_CHUNK bytes) at a time, from chunk `from` on. */
  async *chunks(id: number, from = 0): AsyncGenerator<Buffer> {
    for (let seq = from; ; seq++) {
      const data = await readFileChunk(this.storage, id, seq);
      if (!data) return;
      yield data;
    }
  }

  /**
   * The bytes one more file of `owner` may hold: refused (429) when the owner's or everyone's
   * waiting files are as many as the quota takes, else what is left of the bytes (and maxBytes).
   * (Two uploads of one owner at once each see the same room: the quota is a bound on what waits,
   * not a reservation.)
   */
  async #roomFor(quota: UploadQuota, owner: string | undefined, maxBytes = Infinity): Promise<number> {
    const all = await waitingFiles(this.storage);
    if (all.count >= quota.total.count || all.bytes >= quota.total.bytes) throw quotaSpent(`the server holds ${all.count} uploads (${bytes.format(all.bytes, { unitSeparator: ' ' })}) waiting for an entity, as many as it keeps: attach or wait for them to expire`);
    let room = Math.min(maxBytes, quota.total.bytes - all.bytes);
    if (owner !== undefined) {
      const mine = await waitingFiles(this.storage, owner);
      if (mine.count >= quota.perOwner.count || mine.bytes >= quota.perOwner.bytes) {
        throw quotaSpent(`this client has ${mine.count} uploads (${bytes.format(mine.bytes, { unitSeparator: ' ' })}) waiting for an entity, as many as one client may (${quota.perOwner.count} files, ${bytes.format(quota.perOwner.bytes, { unitSeparator: ' ' })}): attach them to entities, or wait for them to expire`);
      }
      room = Math.min(room, quota.perOwner.bytes - mine.bytes);
    }
    return room;
  }

  /** The uploads no entity holds yet: how many, and their bytes (for the metrics). */
  pending(): Promise<{ count: number; bytes: number }> {
    return waitingFiles(this.storage);
  }

  /** Removes a file and its bytes. */
  remove(id: number): Promise<void> {
    return deleteFile(this.storage, id);
  }

  /**
   * Removes the files no entity claimed before they expired (uploads never attached, uploads a
   * crash cut off) and chunks whose file is gone; resolves to how many files. Each delete is
   * conditional, so an instance whose clock is late cannot remove what another just renewed.
   * (The chunks left without a file, which only a crash leaves, are found by reading every chunk's
   * file: the server's timer asks for them, an upload does not.)
   */
  async sweep(now = Date.now()): Promise<number> {
    const removed = await this.#sweepExpired(now);
    await deleteOrphanChunks(this.storage);
    // the space of what this sweep and the others (sets, sessions) removed goes back to the file system
    await reclaimSpace(this.storage);
    return removed;
  }

  /**
   * The sweep of an upload (uploads are where files come from): the expired files (an index
   * look-up when there are none), at most once a second per process; resolves to how many it removed.
   */
  sweepForUpload(now = Date.now()): Promise<number> {
    if (now - this.#sweptForUpload < UPLOAD_SWEEP_EVERY_MS && now >= this.#sweptForUpload) return Promise.resolve(0);
    this.#sweptForUpload = now;
    return this.#sweepExpired(now);
  }

  async #sweepExpired(now: number): Promise<number> {
    let removed = 0;
    for (const id of await expiredFiles(this.storage, now)) if (await deleteExpiredFile(this.storage, id, now)) removed++;
    return removed;
  }
}

/**
 * Is it an SVG document (text, which file-type leaves to others)? Its prolog — an XML declaration,
 * comments, a doctype, in any number — is skipped by hand, in one pass: a regular expression with
 * repeated lazy groups backtracks exponentially on crafted comments.
 */
function isSvg(text: string): boolean {
  let at = 0;
  const skip = (close: string) => {
    const end = text.indexOf(close, at);
    at = end < 0 ? text.length : end + close.length;
  };
  for (;;) {
    while (at < text.length && (text.charCodeAt(at) === 0xfeff || /\s/.test(text[at]))) at++;
    const rest = text.slice(at, at + 9).toLowerCase();
    if (rest.startsWith('<?xml')) skip('?>');
    else if (rest.startsWith('<!--')) skip('-->');
    else if (rest.startsWith('<!doctype')) skip('>');
    else return /^<svg[\s>]/i.test(text.slice(at, at + 5));
    if (at >= text.length) return false;
  }
}

/** The type of the content, from its first bytes. */
async function sniff(first: Uint8Array): Promise<string> {
  const head = first.subarray(0, SNIFF_BYTES);
  // before file-type, which calls an SVG with an XML prolog (as drawing programs write them) XML
  if (isSvg(Buffer.from(head).toString('utf8'))) return 'image/svg+xml';
  return (await fileTypeFromBuffer(head))?.mime ?? OCTET_STREAM;
}

function quotaSpent(message: string): DatasetError {
  return new DatasetError('TOO_MANY_REQUESTS', message, { retryAfterS: 60 });
}
