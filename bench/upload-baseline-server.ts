// The baseline of the upload bench: node:http alone, streaming an upload's body into a file with
// stream.pipeline and serving it back with fs.createReadStream — the least a server can do.
// Usage: node --import tsx bench/upload-baseline-server.ts DIR  → prints "baseline listening on http://HOST:PORT"

import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: upload-baseline-server.ts DIR\n');
  process.exit(2);
}

const server = createServer((req, res) => {
  void (async () => {
    if (req.method === 'POST') {
      const id = randomBytes(16).toString('hex').toUpperCase();
      await pipeline(req, createWriteStream(join(dir, id)));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ID: id }));
      return;
    }
    const file = join(dir, (req.url ?? '').slice(1));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(statSync(file).size) });
    await pipeline(createReadStream(file), res);
  })().catch((e: unknown) => res.writeHead(500).end(String(e)));
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`baseline listening on http://127.0.0.1:${port}\n`);
});
