// A watch stream (issue 36) read over fetch as it comes, for the tests: its events, a way to wait
// for the next ones, whether the server ended it, and a close.

export interface SseEvent { event: string; id?: string; data: Record<string, unknown> }

/** A watch stream read as it comes: its events, and a way to wait for the next ones. */
export async function openStream(base: string, path: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  /** the server ended the stream (the body's last byte came) */
  let ended = false;
  const done = (async () => {
    if (!res.body || res.status !== 200) return;
    const decoder = new TextDecoder();
    let text = '';
    try {
      for await (const chunk of res.body) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const e: Partial<SseEvent> & { data?: Record<string, unknown> } = {};
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) e.event = line.slice(7);
            else if (line.startsWith('id: ')) e.id = line.slice(4);
            else if (line.startsWith('data: ')) e.data = JSON.parse(line.slice(6)) as Record<string, unknown>;
          }
          if (e.event) events.push(e as SseEvent);
          for (const w of waiters.filter((x) => events.length >= x.n)) w.resolve();
        }
      }
      ended = true;
    } catch {
      // aborted by close()
    }
  })();
  return {
    res,
    events,
    /** resolves once `n` events came (or fails after five seconds) */
    async until(n: number): Promise<SseEvent[]> {
      if (events.length < n) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            new Promise<void>((resolve) => waiters.push({ n, resolve })),
            new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${events.length} events came, waited for ${n}: ${JSON.stringify(events)}`)), 5000))),
          ]);
        } finally {
          clearTimeout(timer);
        }
      }
      return events;
    },
    /** resolves true once the server has ended the stream, false if it has not within `ms` */
    async ends(ms = 3000): Promise<boolean> {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
      return ended;
    },
    async close() {
      controller.abort();
      // (an aborted read ends at once; the bound keeps a test from hanging if it does not)
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
      clearTimeout(timer);
    },
  };
}

