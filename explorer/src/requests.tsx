// "Show the requests": each REST call the page makes, as its URL and as a curl command that makes
// the same call from a shell (a guest's: the session's cookie stays this browser's). The calls are
// kept from the page's start, the last ones only, so the panel shows what led to the view too.

import { useEffect, useState } from 'preact/hooks';
import { curlOf, onRequest, type SentRequest } from './api';

/** calls kept, the newest first */
const KEPT = 50;
/** a body longer is not written into its curl command (curlOf: @body.json) */
const SHOWN_BODY = 16_384;
/** each call's curl command, made once: the panel draws again with every call (an import's are hundreds) */
const curls = new WeakMap<SentRequest, string>();
const curlShown = (r: SentRequest): string => {
  let text = curls.get(r);
  if (text === undefined) curls.set(r, (text = curlOf(r, SHOWN_BODY)));
  return text;
};
let log: SentRequest[] = [];
const watchers = new Set<() => void>();

onRequest((request) => {
  if (!log.includes(request)) log = [request, ...log].slice(0, KEPT);
  for (const w of watchers) w();
});

export function RequestsPanel(props: { onClose: () => void }) {
  const [, setVersion] = useState(0);
  useEffect(() => {
    const w = () => setVersion((v) => v + 1);
    watchers.add(w);
    return () => void watchers.delete(w);
  }, []);
  return (
    <aside class="requests" aria-labelledby="requests-title">
      <div class="row">
        <h2 id="requests-title">Requests</h2>
        <span class="muted">the REST calls of this page, the newest first</span>
        <button type="button" onClick={() => {
          log = [];
          setVersion((v) => v + 1);
        }}>Clear</button>
        <button type="button" onClick={props.onClose}>Hide</button>
      </div>
      <ol class="request-list" data-testid="requests">
        {log.map((r) => (
          <li key={r.id} class="request">
            <p><strong>{r.method}</strong> <code data-testid="request-url">{r.url}</code> <span class="muted">{r.status === undefined ? '…' : r.status}</span></p>
            <pre data-testid="request-curl" aria-label={`curl for ${r.method} ${r.url}`}>{curlShown(r)}</pre>
            {r.body !== undefined && r.body.length > SHOWN_BODY && <p class="muted">The body ({r.body.length} characters) is not shown: curl reads it from body.json.</p>}
          </li>
        ))}
      </ol>
    </aside>
  );
}
