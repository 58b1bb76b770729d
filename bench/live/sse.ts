// The live bench's stream clients: one `$method=watch` stream a plain http.request (agent: false,
// so one connection of its own), bound to a loopback source address of its own choosing (the
// server counts streams per caller: a guest's address, 20 at most), its text/event-stream read
// without an EventSource: each event's type and id, and when its chunk arrived.

import http from 'node:http';

/** What a stream tells its owner of each event: its type (entity, remove, reset…), its id (the stamp) if it has one, its data, when it came (performance.now()). */
export type EventListener = (type: string, id: number | undefined, data: string, at: number) => void;

export interface StreamOptions {
  /** the server's origin, http://127.0.0.1:PORT */
  readonly origin: string;
  /** /rest/…?$method=watch */
  readonly path: string;
  /** the client socket's address (127.x.y.z) */
  readonly localAddress: string;
  readonly onEvent?: EventListener;
}

export class WatchStream {
  /** the stamp the stream starts from (its ready event), once it came */
  readonly ready: Promise<number>;
  /** events received (ready and heartbeats left out) */
  events = 0;
  /** the events that were a reset (the server ended the stream) */
  resets = 0;
  closed = false;
  readonly #request: http.ClientRequest;

  constructor(options: StreamOptions) {
    const url = new URL(options.path, options.origin);
    let ready!: (stamp: number) => void;
    let refused!: (e: Error) => void;
    this.ready = new Promise<number>((resolve, reject) => {
      ready = resolve;
      refused = reject;
    });
    // (a stream that fails before its ready event rejects `ready`; after it, it only counts as closed)
    this.ready.catch(() => undefined);
    let started = false;
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      localAddress: options.localAddress,
      agent: false,
      headers: { accept: 'text/event-stream' },
    });
    this.#request = req;
    req.on('error', (e) => {
      this.closed = true;
      if (!started) refused(e);
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body = (body + c).slice(0, 500)));
        res.on('end', () => {
          this.closed = true;
          refused(Object.assign(new Error(`watch ${options.path} from ${options.localAddress}: ${res.statusCode} ${body}`), { status: res.statusCode }));
        });
        return;
      }
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let from = 0;
        for (;;) {
          const end = buffer.indexOf('\n\n', from);
          if (end < 0) break;
          const block = buffer.slice(from, end);
          from = end + 2;
          if (block.charCodeAt(0) === 58 /* ':' a comment: a heartbeat */) continue;
          let type = 'message';
          let id: number | undefined;
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) type = line.slice(7);
            else if (line.startsWith('id: ')) id = Number(line.slice(4));
            else if (line.startsWith('data: ')) data = line.slice(6);
          }
          if (type === 'ready') {
            started = true;
            ready(id ?? 0);
            continue;
          }
          this.events++;
          if (type === 'reset') this.resets++;
          options.onEvent?.(type, id, data, at);
        }
        buffer = from === 0 ? buffer : buffer.slice(from);
      });
      res.on('close', () => {
        this.closed = true;
        if (!started) refused(new Error(`watch ${options.path}: the stream ended before its ready event`));
      });
    });
    req.end();
  }

  close(): void {
    this.closed = true;
    this.#request.destroy();
  }
}

/**
 * The n-th stream's source address: MAX_WATCH_STREAMS_PER_CALLER (20) streams an address, from
 * 127.0.1.2 on (127.0.0.1 is the writers'): 10,000 streams take 500 addresses.
 */
export function sourceAddress(n: number, perAddress = 20): string {
  const a = Math.floor(n / perAddress);
  return `127.0.${1 + Math.floor(a / 250)}.${2 + (a % 250)}`;
}

/** Opens `count` streams, `parallel` at a time, each ready before it counts; rejects on the first refused. */
export async function openStreams(count: number, make: (n: number) => WatchStream, parallel = 100): Promise<WatchStream[]> {
  const streams: WatchStream[] = new Array<WatchStream>(count);
  let next = 0;
  let failed: unknown;
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, async () => {
    while (next < count && failed === undefined) {
      const n = next++;
      const s = make(n);
      streams[n] = s;
      try {
        await s.ready;
      } catch (e) {
        failed ??= e;
      }
    }
  }));
  if (failed !== undefined) {
    for (const s of streams) s?.close();
    throw failed;
  }
  return streams;
}
