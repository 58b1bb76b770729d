// The one registry of expected failures: each has a stable errCode (4D's own where 4D has one),
// an HTTP status and a component signature. docs/errors.md is kept in step by a test.

export interface ErrorSpec {
  /** numeric code sent as `errCode` */
  readonly errCode: number;
  /** HTTP status of a response whose first error is this one */
  readonly status: number;
  /** `componentSignature`: "dbmg" for 4D's database-engine codes, "dsrs" for codes of our own */
  readonly signature: 'dbmg' | 'dsrs';
  /** one line for docs/errors.md */
  readonly summary: string;
}

export const ERRORS = {
  // ---- 4D's own codes: reference §1.9 and §3.14 (1263, 1046, 1517, 1542, 1802); 1500 is what
  // captured answers of real 4D servers carry for an unknown attribute (see docs/decisions.md) ----
  STAMP_CHANGED: { errCode: 1263, status: 409, signature: 'dbmg', summary: 'The given __STAMP does not match the stored one.' },
  RECORD_NOT_SAVED: { errCode: 1046, status: 409, signature: 'dbmg', summary: 'The record cannot be saved (follows 1263).' },
  ENTITY_NOT_SAVED: { errCode: 1517, status: 409, signature: 'dbmg', summary: 'The entity cannot be saved (closes a save-failure stack).' },
  NEW_ENTITY_NOT_SAVED: { errCode: 1534, status: 400, signature: 'dbmg', summary: 'The new entity cannot be saved (closes the errors of a new entity that $method=validate refuses).' },
  ENTITY_NOT_FOUND: { errCode: 1542, status: 404, signature: 'dbmg', summary: 'No entity with the given key (or unique attribute value) in the dataclass.' },
  ENTITY_SET_NOT_FOUND: { errCode: 1802, status: 404, signature: 'dbmg', summary: 'The entity set cannot be found (released, expired or never created).' },
  UNKNOWN_MEMBER_METHOD: { errCode: -10729, status: 404, signature: 'dbmg', summary: 'Unknown member method: the function called over REST does not exist or is not exposed.' },
  NO_PERMISSION_UPDATE: { errCode: 1558, status: 403, signature: 'dbmg', summary: 'The session may not update entities of the dataclass (or this attribute): 401 for a guest session (log in first), 403 for a logged-in one. Nothing is saved, no event runs.' },
  NO_PERMISSION_EXECUTE: { errCode: 1561, status: 403, signature: 'dbmg', summary: 'The session may not run the function: 401 for a guest session, 403 for a logged-in one.' },
  UNKNOWN_ATTRIBUTE: { errCode: 1500, status: 404, signature: 'dbmg', summary: 'An attribute named in the URL or in an option does not exist in the dataclass or is not exposed.' },

  // ---- codes of our own (4D documents none for these cases) ----
  UNKNOWN_RESOURCE: { errCode: 7001, status: 404, signature: 'dsrs', summary: 'The URL names no resource this server has (e.g. /rest/$nothing).' },
  UNKNOWN_DATACLASS: { errCode: 7002, status: 404, signature: 'dsrs', summary: 'The URL names a dataclass that does not exist or is not exposed.' },
  MALFORMED_URL: { errCode: 7004, status: 400, signature: 'dsrs', summary: 'The URL path does not follow the REST grammar (unbalanced brackets, bad escapes, extra segments).' },
  INVALID_KEY: { errCode: 7005, status: 400, signature: 'dsrs', summary: 'A key in the URL cannot be converted to the primary key type.' },
  UNKNOWN_OPTION: { errCode: 7006, status: 400, signature: 'dsrs', summary: "A $-option in the query string is unknown, or a parameter without '$' names an option (ours or another API's) or an attribute (?lastName=Smith): the message shows what to write." },
  INVALID_OPTION: { errCode: 7007, status: 400, signature: 'dsrs', summary: 'A $-option has a value it cannot take, or is given twice.' },
  OPTION_NOT_SUPPORTED: { errCode: 7008, status: 501, signature: 'dsrs', summary: 'A documented $-option this version does not implement yet.' },
  LIMIT_EXCEEDED: { errCode: 7009, status: 400, signature: 'dsrs', summary: 'A request goes past a named limit (page size, URL length, path depth).' },
  METHOD_NOT_ALLOWED: { errCode: 7010, status: 405, signature: 'dsrs', summary: 'The HTTP method cannot be used on this resource.' },
  INVALID_ORDER_BY: { errCode: 7011, status: 400, signature: 'dsrs', summary: 'An order-by string is malformed or names an attribute that cannot be sorted.' },
  NOT_A_RELATION: { errCode: 7012, status: 400, signature: 'dsrs', summary: 'A path expects a relation attribute but names another kind.' },
  INVALID_VALUE: { errCode: 7013, status: 400, signature: 'dsrs', summary: 'A value cannot be converted to the type of its attribute.' },
  INVALID_BODY: { errCode: 7014, status: 400, signature: 'dsrs', summary: 'The request body is not valid JSON or not the expected shape.' },
  VALUE_NOT_UNIQUE: { errCode: 7015, status: 409, signature: 'dsrs', summary: 'A save would give a unique attribute (or the key) a value another entity has.' },
  BODY_TOO_LARGE: { errCode: 7016, status: 413, signature: 'dsrs', summary: 'The request body is larger than the server accepts.' },
  INVALID_FILTER: { errCode: 7017, status: 400, signature: 'dsrs', summary: 'A query ($filter, $params, ds.X.query) is malformed, names an unknown attribute or has a value of the wrong type.' },
  VALUE_REQUIRED: { errCode: 7018, status: 400, signature: 'dsrs', summary: 'A save leaves null an attribute the model marks notNull.' },
  FUNCTION_FAILED: { errCode: 7019, status: 500, signature: 'dsrs', summary: 'A function called over REST threw or rejected with an unexpected exception: the answer names the function and the request id, the exception (with its stack) goes to the server log (sent too with --expose-errors); any transaction it opened is rolled back. A refusal meant for the client is a DatasetError (REFUSED).' },
  FUNCTION_TIMEOUT: { errCode: 7020, status: 504, signature: 'dsrs', summary: 'A function called over REST took longer than the time limit (--function-timeout): its open transaction is rolled back, its next datastore call refused; one that holds the server that long has its instance replaced.' },
  INVALID_PARAMETER: { errCode: 7021, status: 400, signature: 'dsrs', summary: 'A parameter of a function call does not fit the type the function declares (or is missing, or one too many).' },
  METHOD_BAD_RESULT: { errCode: 7022, status: 500, signature: 'dsrs', summary: 'A project method returned something other than an object or an array.' },
  UPLOAD_NOT_FOUND: { errCode: 7023, status: 400, signature: 'dsrs', summary: 'An {"ID": …} value names no upload waiting to be attached: unknown, expired, or already attached to another entity.' },
  NOT_AN_IMAGE: { errCode: 7024, status: 400, signature: 'dsrs', summary: 'An upload announced as an image ($rawPict=true) is not one.' },
  RANGE_NOT_SATISFIABLE: { errCode: 7026, status: 416, signature: 'dsrs', summary: 'A Range header asks for bytes past the end of the file.' },
  UPLOAD_WRONG_KIND: { errCode: 7025, status: 400, signature: 'dsrs', summary: 'An upload of the other kind is attached: image attributes take $rawPict uploads, blob attributes $binary ones.' },
  EVENT_FAILED: { errCode: 7030, status: 409, signature: 'dsrs', summary: 'An entity event threw an exception instead of returning an error object: the save or drop is refused (the code sits in the DBEV item of the save-failure stack); the cause is logged, not sent.' },
  STORAGE_UNAVAILABLE: { errCode: 7031, status: 503, signature: 'dsrs', summary: 'The database cannot be reached (connection refused or lost, server shutting down): nothing was changed by the failed statement; try again once it is back (the pool reconnects by itself).' },
  TRANSACTION_CONFLICT: { errCode: 7032, status: 409, signature: 'dsrs', summary: 'The database stopped the transaction for a conflict with another one (PostgreSQL serialization failure or deadlock) and it could not be run again safely, or failed again each time: nothing of it was kept; try again.' },
  NO_PERMISSION_READ: { errCode: 7040, status: 403, signature: 'dsrs', summary: 'The session may not read the dataclass, or query or sort by the attribute: 401 for a guest session (log in first), 403 for a logged-in one.' },
  NO_PERMISSION_CREATE: { errCode: 7041, status: 403, signature: 'dsrs', summary: 'The session may not create entities of the dataclass (or give this attribute a value): 401 for a guest session, 403 for a logged-in one. Nothing is saved, no event runs.' },
  NO_PERMISSION_DROP: { errCode: 7042, status: 403, signature: 'dsrs', summary: 'The session may not drop entities of the dataclass (or one holding a value in this attribute): 401 for a guest session, 403 for a logged-in one. Nothing is dropped, no event runs.' },
  LOGIN_REQUIRED: { errCode: 7043, status: 401, signature: 'dsrs', summary: 'The datastore is in force-login mode and the session is a guest: only the catalog and authentify (and what roles.json grants to guest) are open until it logs in.' },
  TOO_MANY_REQUESTS: { errCode: 7044, status: 429, signature: 'dsrs', summary: 'A quota is spent (requests a minute, entity sets or entity locks of a session, live sessions, failed logins): try again after the Retry-After header\'s seconds.' },
  HOST_NOT_ALLOWED: { errCode: 7045, status: 421, signature: 'dsrs', summary: 'The Host header names a host this server does not answer for (--allowed-hosts): a guard against DNS rebinding.' },
  CROSS_SITE_REFUSED: { errCode: 7046, status: 403, signature: 'dsrs', summary: 'A request that changes something (a write, or a GET that logs out, stores or releases a set, locks, calls a function) came from a web page of another origin than the server\'s and the --cors-origin list (by its Origin; without one, Sec-Fetch-Site and the Referer): a guard against cross-site request forgery.' },
  MALFORMED_REQUEST: { errCode: 7047, status: 400, signature: 'dsrs', summary: 'The request cannot be read as HTTP (Node\'s parser refused it: a bad request line or header, Content-Length beside Transfer-Encoding): answered, then the connection is closed.' },
  HEADERS_TOO_LARGE: { errCode: 7048, status: 431, signature: 'dsrs', summary: 'The request\'s headers are larger than the server reads (Node\'s --max-http-header-size, 16 KB by default): answered, then the connection is closed.' },
  REQUEST_TIMEOUT: { errCode: 7049, status: 408, signature: 'dsrs', summary: 'The request did not arrive in full within the server\'s time for it (Node\'s requestTimeout): answered, then the connection is closed.' },
  LOGIN_FAILED: { errCode: 7050, status: 401, signature: 'dsrs', summary: 'A login was refused: unknown user name or wrong password — a $directory/login (the DataStore class\'s directoryLogin answered false; the body also holds {"result": false}), or the built-in users\' authentify (the same answer, in the same time, for an unknown name and a wrong password).' },
  NO_DIRECTORY: { errCode: 7051, status: 501, signature: 'dsrs', summary: 'A $directory/login came to a datastore whose DataStore class defines no directoryLogin: it has no legacy login (log in with authentify, or define the hook).' },
  ENTITY_LOCKED: { errCode: 7052, status: 423, signature: 'dsrs', summary: 'The entity is locked by another live session ($lock=true, entity.lock()): it cannot be saved or dropped until that session unlocks it, logs out or expires. 4D documents no errCode (its save() answers status 3, "Already locked"); a refused update\'s __STATUS says so, with the locker\'s lockInfo.' },
  DROP_REFUSED_BY_RELATION: { errCode: 7110, status: 409, signature: 'dsrs', summary: 'A drop (of an entity, a $filter\'s entities, an entity set, from code; inside $atomic too) is refused by a 1→N relation\'s deleteRule: "refuse" while the relation has related entities, or "cascade" when some of them are out of the session\'s reach (its row filter hides them). The message names the dataclass, the entity and the relation attribute (also sent as attributeName). Nothing is dropped: the whole drop, its cascades included, is rolled back.' },
  UNKNOWN_SINGLETON: { errCode: 7060, status: 404, signature: 'dsrs', summary: 'The URL names a shared singleton class the project does not have (/rest/$singleton/{Class}/{function}).' },
  LOCK_NEEDS_SESSION: { errCode: 7053, status: 409, signature: 'dsrs', summary: 'A lock ($lock=true, entity.lock()) asked by a session the client has not kept (its cookie is new: never sent back), or whose session ended meanwhile (a logout or a login as another user at the same time): a lock needs a session the client keeps; send its cookie back (the refusal gives a guest its cookie), or log in, and ask again.' },
  INVALID_HEADER: { errCode: 7054, status: 400, signature: 'dsrs', summary: 'A request header the server reads holds a value it cannot use (If-Match that names no entity tag, or on a request that is not the update of one entity); the message names the header and what it takes.' },
  REFUSED: { errCode: 7061, status: 400, signature: 'dsrs', summary: "Refused by the application's own rule: a function or an event threw new DatasetError('REFUSED', message, { status, errCode }) — its status (a 4xx) and its errCode are the application's, when it gives them." },
  TOO_MANY_CONNECTIONS: { errCode: 7062, status: 503, signature: 'dsrs', summary: 'The server holds as many connections as it takes (--max-connections), or as many from the client\'s address (--max-connections-per-address): answered on the new connection, which is closed; try again after Retry-After.' },
  EXPECTATION_FAILED: { errCode: 7063, status: 417, signature: 'dsrs', summary: 'The request\'s Expect header asks for something other than 100-continue, the only expectation the server meets.' },
  STORAGE_BUSY: { errCode: 7064, status: 503, signature: 'dsrs', summary: 'Another process holds the database\'s write lock (SQLite) past the time a write waits for it: nothing was changed; try again after Retry-After. Reads go on meanwhile.' },
  STORAGE_FULL: { errCode: 7065, status: 507, signature: 'dsrs', summary: 'The disk holding the database is full: the write was not made (its transaction rolled back); reads go on. Free space, then try again.' },
  QUERY_TIMEOUT: { errCode: 7066, status: 504, signature: 'dsrs', summary: 'The statements of a request ran past the query time limit (--query-timeout), one alone or together, and were stopped: nothing they would have written was kept. Narrow the query (fewer levels of relations, a more selective filter) or page it.' },
  SERVER_BUSY: { errCode: 7067, status: 503, signature: 'dsrs', summary: "The answers this server process is sending hold the bytes it keeps in flight at once (--max-answers-in-flight: measured and not yet sent, or sent and not yet taken by the clients' sockets): the read was refused before its rows were read; try again after Retry-After, or ask for less." },
  CONVERSIONS_BUSY: { errCode: 7070, status: 503, signature: 'dsrs', summary: 'As many image conversions ($imageformat) are waiting as the server queues (--max-queued-conversions): try again after Retry-After, or read the image as stored. One client past its own share (--max-conversions-per-client) is answered 429 (7044) instead.' },
  READ_ONLY: { errCode: 7071, status: 403, signature: 'dsrs', summary: 'The dataclass or attribute is kept by the server (change tracking: __DeletedRecords, __GlobalStamp): no request and no server code writes it.' },
  USER_NOT_FOUND: { errCode: 7072, status: 404, signature: 'dsrs', summary: 'No built-in user of that name (names are compared without case or accents).' },
  USER_EXISTS: { errCode: 7073, status: 409, signature: 'dsrs', summary: 'A built-in user of that name exists already (names are compared without case or accents).' },
  WEAK_PASSWORD: { errCode: 7074, status: 400, signature: 'dsrs', summary: "A new password is not a text, is shorter than auth.json's users.minPasswordLength, or is longer than 1,024 bytes." },
  TOKEN_INVALID: { errCode: 7075, status: 401, signature: 'dsrs', summary: 'The Authorization: Bearer token is not of the form dsr_…, or is unknown, revoked or expired, or its user was removed.' },
  OTP_INVALID: { errCode: 7076, status: 401, signature: 'dsrs', summary: 'The $4DSID one-time passcode is not a UUID, or is unknown, used already or expired, or the session it resumes has ended.' },
  USERS_NOT_ENABLED: { errCode: 7077, status: 501, signature: 'dsrs', summary: 'The request needs built-in users (users, tokens, changePassword), which this project does not turn on: add {"users": true} to its auth.json.' },
  ACCOUNT_LOCKED: { errCode: 7078, status: 429, signature: 'dsrs', summary: "Too many wrong passwords in a row for this user name (auth.json's users.lockout): its logins are refused until the Retry-After header's seconds have passed, whether a user has the name or not." },
  WRONG_PASSWORD: { errCode: 7079, status: 401, signature: 'dsrs', summary: 'changePassword: the current password given is not the user\'s.' },
  INVALID_ROLE: { errCode: 7080, status: 400, signature: 'dsrs', summary: 'A user is given a role roles.json does not declare (or roles that are not a list of names).' },
  INVALID_USER_NAME: { errCode: 7081, status: 400, signature: 'dsrs', summary: 'A new user name is empty, longer than 100 characters, holds control characters or begins or ends with spaces.' },
  INVALID_TOKEN_REQUEST: { errCode: 7082, status: 400, signature: 'dsrs', summary: "A token to create asks for a privilege its user does not hold, an expiry in the past or past auth.json's tokens.maxDays, or has no name; or the user holds 100 tokens already." },
  TOKEN_NOT_FOUND: { errCode: 7084, status: 404, signature: 'dsrs', summary: 'No API token of that id (revoked already, or never made).' },
  LOGINS_BUSY: { errCode: 7085, status: 503, signature: 'dsrs', summary: 'As many password checks as one server process runs at once (32: each holds 19 MiB) are running: try again after the Retry-After header\'s second.' },
  ADMIN_REQUIRED: { errCode: 7083, status: 403, signature: 'dsrs', summary: 'Only a session holding the admin privilege manages users and tokens and reads $roles (401 for a guest: log in first).' },
  OIDC_UNKNOWN_PROVIDER: { errCode: 7090, status: 404, signature: 'dsrs', summary: 'A single sign-on URL (/rest/$oidc/{name}/login or /callback) names a provider auth.json does not list: GET /rest/$oidc lists them.' },
  OIDC_BAD_STATE: { errCode: 7091, status: 400, signature: 'dsrs', summary: 'A single sign-on callback whose state names no sign-in waiting for it: none given, unknown, used already (a callback works once, on any instance), past its 10 minutes, started for another provider or in another browser. Nothing is changed: sign in again.' },
  OIDC_SIGN_IN_FAILED: { errCode: 7092, status: 401, signature: 'dsrs', summary: "The provider did not sign the user in (its callback's error: access_denied, login_required …; a code it refused), or its answer failed the checks (ID token's issuer, audience, signature, expiry, nonce), or named no user: the session is left as it was." },
  OIDC_PROVIDER_UNAVAILABLE: { errCode: 7093, status: 502, signature: 'dsrs', summary: "The sign-in provider cannot be used now: its metadata or token endpoint cannot be reached or gives no usable answer, it refuses our client (clientId, secret), or its callback says it failed (server_error, invalid_scope …). The cause is in the server log; the session is left as it was." },
  OIDC_BAD_REDIRECT: { errCode: 7094, status: 400, signature: 'dsrs', summary: 'A single sign-on login\'s redirect is not a path of this server (/…): another host, //host, a scheme, backslashes or control characters are refused, so that a sign-in link cannot send the user elsewhere.' },
  INTERNAL: { errCode: 7500, status: 500, signature: 'dsrs', summary: 'An unexpected server error; the cause is logged, not sent.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorName = keyof typeof ERRORS;
