// A project's webhooks.json (issue 36): the servers the changes of tracked dataclasses are POSTed
// to. Beside model.json and roles.json, as 4D keeps its HTTP handlers in HTTPHandlers.json:
//   {"webhooks": [{"name": "orders-to-billing", "dataClass": "Order", "filter": "total > :1",
//     "params": [100], "attributes": "total,customer", "url": "https://billing.example/hooks",
//     "secretEnv": "BILLING_HOOK_SECRET", "privileges": ["orders"]}]}
// `secret` holds the signing secret itself, `secretEnv` names the environment variable that does
// (keep secrets out of the repository). Everything is checked here, at the start; the filter and
// the attributes are checked again when the server plans the webhook's watch (at its start too).

import { readFileSync } from 'node:fs';
import type { WebhookConfig } from '../datastore/live/webhook-cursors.js';
import type { Model } from '../model/types.js';
import { didYouMean } from '../util/suggest.js';

const KEYS = ['name', 'dataClass', 'filter', 'params', 'attributes', 'url', 'secret', 'secretEnv', 'privileges'];
/** a name fit for a header, a metric label and a log line */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** the shortest signing secret taken: 16 characters (128 bits of hex) */
const MIN_SECRET = 16;

export class WebhooksFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhooksFileError';
  }
}

/** The webhooks of a webhooks.json, checked against the model; a WebhooksFileError says what is wrong and where. */
export function readWebhooksFile(file: string, model: Model, env: NodeJS.ProcessEnv = process.env): WebhookConfig[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new WebhooksFileError(`${file} cannot be read as JSON: ${(e as Error).message}`);
  }
  const list = (parsed as { webhooks?: unknown } | null)?.webhooks;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Array.isArray(list)) {
    throw new WebhooksFileError(`${file} holds {"webhooks": [ … ]}: an object whose "webhooks" is an array`);
  }
  const names = new Set<string>();
  return list.map((entry, i) => {
    const where = `${file}: webhooks[${i}]`;
    const hook = webhook(entry, where, model, env);
    if (names.has(hook.name)) throw new WebhooksFileError(`${where}: the name "${hook.name}" is taken by an earlier webhook (each has its own: its cursor is kept by it)`);
    names.add(hook.name);
    return hook;
  });
}

function webhook(entry: unknown, where: string, model: Model, env: NodeJS.ProcessEnv): WebhookConfig {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new WebhooksFileError(`${where} is an object ({"name", "dataClass", "url", "secret" or "secretEnv", …})`);
  const e = entry as Record<string, unknown>;
  for (const key of Object.keys(e)) {
    if (!KEYS.includes(key)) throw new WebhooksFileError(`${where}: "${key}" is no setting of a webhook${didYouMean(key, KEYS)} (it takes ${KEYS.join(', ')})`);
  }
  const text = (key: string, required: boolean): string | undefined => {
    const v = e[key];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v === '') throw new WebhooksFileError(`${where}: "${key}" is ${required ? 'required, ' : ''}a non-empty string`);
    return v;
  };
  const name = text('name', true) as string;
  if (!NAME.test(name)) throw new WebhooksFileError(`${where}: the name "${name.slice(0, 80)}" has letters, digits, '_', '.' and '-' only, 64 at most`);
  const dataClass = text('dataClass', true) as string;
  const dc = model.dataClasses.find((d) => d.name === dataClass);
  if (!dc) throw new WebhooksFileError(`${where}: there is no dataclass "${dataClass}"${didYouMean(dataClass, model.dataClasses.map((d) => d.name))}`);
  if (!dc.globalStamp) throw new WebhooksFileError(`${where}: ${dataClass} does not track its changes: give it "trackChanges": true in model.json (a webhook sends what the tracking records)`);
  const url = text('url', true) as string;
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new WebhooksFileError(`${where}: "url" ${JSON.stringify(url.slice(0, 100))} is not a URL`);
  }
  if (parsedUrl.protocol !== 'https:' && parsedUrl.protocol !== 'http:') throw new WebhooksFileError(`${where}: "url" is an http:// or https:// URL, not ${parsedUrl.protocol}`);
  const secret = secretOf(text('secret', false), text('secretEnv', false), where, env);
  const params = e.params;
  if (params !== undefined && !Array.isArray(params)) throw new WebhooksFileError(`${where}: "params" is an array (the values of the filter's :1, :2, …)`);
  const privileges = e.privileges ?? [];
  if (!Array.isArray(privileges) || privileges.some((p) => typeof p !== 'string' || p === '')) throw new WebhooksFileError(`${where}: "privileges" is an array of privilege names (roles.json's)`);
  return { name, dataClass, filter: text('filter', false), params: params as unknown[] | undefined, attributes: text('attributes', false), url, secret, privileges: privileges as string[] };
}

function secretOf(secret: string | undefined, variable: string | undefined, where: string, env: NodeJS.ProcessEnv): string {
  if ((secret === undefined) === (variable === undefined)) throw new WebhooksFileError(`${where}: give the signing secret as "secret" or name the environment variable that holds it as "secretEnv" (one of them)`);
  const value = secret ?? env[variable as string];
  if (value === undefined || value === '') throw new WebhooksFileError(`${where}: the environment variable ${variable} ("secretEnv") is not set`);
  if (value.length < MIN_SECRET) throw new WebhooksFileError(`${where}: the signing secret is ${value.length} characters long; it takes ${MIN_SECRET} at least (e.g. openssl rand -hex 32)`);
  return value;
}
