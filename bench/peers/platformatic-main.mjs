// Runs Platformatic DB through its documented programmatic API (`create(root, config)`, then
// `start()`), in this one process (no Watt runtime, no worker thread), and prints a ready line with
// its URL. Run by the Node 22 binary of the peers' cache, never by the repository's Node.
//   node platformatic-main.mjs <folder holding node_modules/@platformatic/db> <config.json>
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [installDir, configFile] = process.argv.slice(2);
const { create } = await import(pathToFileURL(join(installDir, 'node_modules', '@platformatic', 'db', 'index.js')).href);
const config = JSON.parse(readFileSync(configFile, 'utf8'));
// (read first: create() changes the object it is given)
const hostname = config.server.hostname;
const app = await create(dirname(configFile), config);
// Its configuration loader replaces server.hostname by 0.0.0.0 inside a container (isDocker()):
// put the loopback address back, on both copies of the server options it reads.
app.config.server.hostname = hostname;
app.serverConfig.hostname = hostname;
const url = await app.start({ listen: true });
if (new URL(url).hostname !== hostname) {
  process.stderr.write(`platformatic listens on ${url}, not on ${hostname}: stopping\n`);
  await app.stop();
  process.exit(1);
}
process.stdout.write(`platformatic listening on ${url}\n`);

const stop = () => {
  app.stop().then(() => process.exit(0), () => process.exit(1));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
