// The OpenAPI 3.1 document of GET /rest/$openapi: built from the live model and the caller's
// session (what it sees, may read, write and call), and kept per datastore and per set of
// privileges. A session's Grants object is one per distinct set of privileges (permissions/policy.ts),
// and everything the document depends on — the model, the classes and project methods loaded at
// start-up, the visibility of attributes (one per Grants), force-login — is fixed for a datastore
// and a Grants: two sessions holding the same privileges get the same text, built once.

import { stringify } from 'yaml';
import type { Datastore } from '../../datastore/index.js';
import type { Grants } from '../../permissions/policy.js';
import { REST_PREFIX } from '../request/constants.js';
import type { Scope } from '../scope/scope.js';
import { parameters } from './parameters.js';
import { buildPaths } from './paths.js';
import { componentSchemas, readable, type Schema } from './schemas.js';

export const OPENAPI_VERSION = '3.1.0';

/** The document for the caller's session. */
export function buildDocument(scope: Scope): Schema {
  const dataClasses = scope.ds.model.dataClasses.filter((dc) => readable(scope, dc));
  const grants = scope.access.grants;
  const who = grants.guest ? 'a guest session' : `a session holding ${grants.privileges.join(', ') || 'no declared privilege'}`;
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: `${scope.ds.name} — REST API`,
      version: '1.0.0',
      description: [
        `The REST API of the datastore ${scope.ds.name}, in the style of 4D's ORDA REST server, as ${who} may use it: the dataclasses it may read, the writes and the functions roles.json grants it. Log in (POST ${REST_PREFIX}/$catalog/authentify, or ${REST_PREFIX}/$directory/login) and read this document again to see more.`,
        'Every failure answers {"__ERROR": [{message, componentSignature, errCode}]} (the Error schema lists the errCodes). Dataclasses, attributes and functions are named as the model names them (case-sensitive).',
      ].join('\n\n'),
    },
    // (no servers: the paths are absolute from this server's root, where the document is read)
    tags: [
      { name: 'catalog', description: 'the structure of the datastore' },
      { name: 'server', description: 'the server itself: this document, $info, uploads, entity sets' },
      { name: 'session', description: "4D's legacy login ($directory)" },
      { name: 'administration', description: 'built-in users, their API tokens, roles.json as a matrix (administrators)' },
      ...dataClasses.map((dc) => ({ name: dc.name, description: `the ${dc.name} dataclass (${dc.collectionName})` })),
    ],
    paths: buildPaths(scope, dataClasses),
    components: {
      schemas: componentSchemas(scope, dataClasses),
      parameters: parameters(scope.services.maxPageSize),
      responses: {
        Error: { description: 'a failure (4xx, 5xx): the errors, innermost first', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: scope.services.cookie.name, description: 'the session cookie the server sets on the first answer; send it back to stay the same session (a login gives it privileges)' },
        ...(scope.core.tokens ? { token: { type: 'http', scheme: 'bearer', description: "an API token of a built-in user (dsr_…): acts as its user with the token's privileges, no cookie" } } : {}),
      },
    },
    // a guest may call without a cookie; a session is the cookie (or an API token)
    security: [{}, { session: [] }, ...(scope.core.tokens ? [{ token: [] }] : [])],
  };
}

interface Texts {
  readonly json: string;
  yaml?: string;
}

/** Per datastore and Grants, the texts for a session that force-login mode keeps out of $info (a guest) and for one it lets in. */
const cache = new WeakMap<Datastore, WeakMap<Grants, { locked?: Texts; open?: Texts }>>();

/** The document's text for the caller's session, in JSON or YAML, built once per datastore and set of privileges. */
export function documentText(scope: Scope, format: 'json' | 'yaml'): string {
  let byGrants = cache.get(scope.ds);
  if (!byGrants) cache.set(scope.ds, (byGrants = new WeakMap()));
  const grants = scope.access.grants;
  let entry = byGrants.get(grants);
  if (!entry) byGrants.set(grants, (entry = {}));
  // (a user whose roles declare no privilege holds a guest's grants, yet is no guest to force-login mode)
  const which = scope.core.policy.forceLogin && scope.session.isGuest() ? 'locked' : 'open';
  const texts = (entry[which] ??= { json: JSON.stringify(buildDocument(scope)) });
  if (format === 'json') return texts.json;
  // (the YAML from the JSON text: one build, and no shared object the YAML writer could alias)
  return (texts.yaml ??= stringify(JSON.parse(texts.json), { aliasDuplicateObjects: false, lineWidth: 0 }));
}
