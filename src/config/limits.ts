// Named limits, checked before any work is done (architecture guide, convention 7).

/** Longest request URL accepted (path and query string). */
export const MAX_URL_LENGTH = 16 * 1024;
/** Largest page a collection request may ask for with $top/$limit. */
export const MAX_PAGE_SIZE = 10_000;
/** Default page size when neither $top nor the dataclass's defaultTopSize says otherwise (spec "Limits"). */
export const DEFAULT_PAGE_SIZE = 100;
/** Most path segments after the resource (relation, attribute list, $entityset/id …). */
export const MAX_PATH_SEGMENTS = 6;
/** Largest request body accepted, in bytes (JSON bodies; uploads have their own limit). */
export const MAX_BODY_SIZE = 10 * 1024 * 1024;
/** Longest query string ($filter, ds.X.query) accepted. */
export const MAX_QUERY_LENGTH = 8 * 1024;
/** Deepest nesting of parentheses and NOT in a query. */
export const MAX_QUERY_DEPTH = 32;
/** Highest placeholder number (4D's indexed placeholders go up to 128). */
export const MAX_QUERY_PARAMS = 128;
/** Most values in one IN list. */
export const MAX_IN_LIST = 10_000;
/** Longest $timeout of an entity set or an upload, in seconds (30 days). */
export const MAX_TIMEOUT_S = 30 * 24 * 3600;

// ---- queries, sorts and projections ----
/** How deep calculated attributes may query or sort by one another (a deeper chain is taken for a loop). */
export const MAX_CALCULATED_DEPTH = 8;
/** Longest attribute path accepted in $attributes / $expand (limits work on hostile input). */
export const MAX_PATH_DEPTH = 8;
/** Most sort terms in one order, calculated attributes' orders counted (databases refuse a few thousand). */
export const MAX_ORDER_TERMS = 64;

// ---- reading in batches ----
/** Keys bound in one IN list at most; longer lists are read in several queries. */
export const KEYS_PER_QUERY = 1000;
/** Counts of selections kept per process with the data version they were read at (datastore/selections/count-cache.ts); the least recently used go past it. */
export const COUNT_CACHE_ENTRIES = 2000;
/** Longest key (the count's SQL and its parameters) of a count kept: longer ones (a set's thousands of keys) are counted each time. */
export const COUNT_CACHE_KEY_LENGTH = 4096;
/** projections of named attributes or expansions kept per dataclass and visibility (the row writer generated for each goes with it) */
export const PROJECTIONS_KEPT = 256;
/** Related entities one answer may inline, every level of $attributes / $expand together (datastore/reads/fetch.ts InlineBudget): about 100 MB of JSON at most. */
export const MAX_INLINED_ENTITIES = 100_000;
/**
 * The bytes of values one answer may hold (--max-answer-size; datastore/reads/answer-size.ts), measured
 * in SQL before the rows are read: 64 MB of JSON is 10,000 entities of 6 KB, and takes three to
 * four times that in memory while it is made (rows, entity texts, the body, its compressed copy);
 * more is exported ($format=ndjson or csv, sent as it is read). See docs/decisions.md.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/**
 * Reads of at most this many rows (a default page) are not measured first in SQL: the statement
 * would cost a page of 100 a quarter more (bench/answer-size-bench.ts). Their values are counted
 * against the answer's size as they are read instead (answer-size.ts countRows), before any text
 * is made of them.
 */
export const UNMEASURED_ROWS = 100;
/**
 * The bytes of answers one server process holds in flight at once (--max-answers-in-flight;
 * rest/scope/answer-flight.ts): what answers being sent have measured and not yet made into text, and
 * their text not yet taken by the kernel. 256 MB is four answers of the largest size, and keeps a
 * process within about 1 GB of its idle memory while clients do not read (values take two to
 * three times their bytes in memory); past it a read is refused, 503 with Retry-After.
 */
export const DEFAULT_MAX_ANSWERS_IN_FLIGHT = 256 * 1024 * 1024;
/**
 * An answer's text is made and sent in slices of about this many characters (rest/present/answer-stream.ts):
 * an answer no longer than one slice goes as one string (with its Content-Length), a longer one as
 * a stream, each slice made when the socket has taken the one before.
 */
export const ANSWER_SLICE_CHARS = 256 * 1024;
/** Work one slice of an answer's text takes at most (a turn of the event loop between two): other requests wait no longer for it. */
export const ANSWER_SLICE_MS = 20;
/** Answers smaller than this, not measured, are not followed on their way out (rest/scope/answer-flight.ts): they fit in the socket's buffers. */
export const WATCHED_ANSWER_BYTES = 64 * 1024;
/**
 * A socket with answer bytes waiting whose kernel takes none of them for this long is closed
 * (--send-timeout): the kernel takes them in bursts, a third or so of its send buffer (up to 4 MB
 * on Linux) at a time, so a client reading steadily at 50 KB/s or more is never cut.
 */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;
/** The bytes of values one chunk of an export reads at most (fewer rows than EXPORT_CHUNK_ROWS when they are big; always one row at least). */
export const EXPORT_CHUNK_BYTES = 16 * 1024 * 1024;
/**
 * Entities one $method=update or validate may carry (--max-batch-entities): as many as one page
 * may read (MAX_PAGE_SIZE). About a second of work on SQLite (≈80 µs a save) and a few MB of
 * JSON, well within the body size limit; a bigger load is sent in several requests or imported
 * (`dataset-rest import`). Past it: 400 (7009), before anything is written.
 */
export const DEFAULT_MAX_BATCH_ENTITIES = 10_000;
/** Work a big write does between two turns of the event loop (util/loop-turns.ts): other requests wait this long at most for it. */
export const WRITE_SLICE_MS = 10;
/**
 * SQLite statements (run on the event loop) that follow one another with no turn of it in
 * between (a request awaits each, and a resolved promise's continuation runs before any I/O) hold
 * it this long at most before the next waits for a turn (storage/sqlite.ts): a request of several
 * long statements lets others through between them.
 */
export const STATEMENT_SLICE_MS = 10;
/** Entities are read in chunks of this size when iterating or converting to an array. */
export const ITERATION_CHUNK = 1000;

// ---- entity sets ----
/** Default lifetime of an entity set: 2 hours (spec "Limits"). */
export const DEFAULT_SET_TIMEOUT_S = 7200;
/** Rebuilt sets (from $savedfilter / $savedorderby) live 10 minutes, whatever their first lifetime (reference §3.18). */
export const REBUILT_SET_TIMEOUT_S = 600;
/** Members kept by all the sets in the database at most, all instances together (--max-set-members; a set's row counts SET_ROW_MEMBERS more); past it, the least recently used sets of the session holding the most go first (each session a fair share). */
export const DEFAULT_MAX_SET_MEMBERS = 20_000_000;
/** Bytes the entity sets of one process keep at most (--max-set-memory): the in-process store's sets, or the database store's members read and kept at hand. Members are packed (4 bytes an integer key, 16 a uuid), outside the V8 heap: 256 MiB is 64M integer keys, far under the heap's limit. */
export const DEFAULT_MAX_SET_MEMORY = 256 * 2 ** 20;
/** What a set costs in memory besides its members (its record, id, places in the store's maps and expiry queue): counted, so that empty sets count too. */
export const SET_RECORD_BYTES = 640;
/** A set's row in the database, counted as this many members toward --max-set-members (an empty set counts too). */
export const SET_ROW_MEMBERS = 16;
/** How often the memory of expired entity sets is reclaimed when no request comes. */
export const SET_SWEEP_MS = 60_000;
/** Members of an entity set stored in one row of the database (512 KB of integer keys). */
export const SET_CHUNK_MEMBERS = 65_536;
/** Members of sets read from the database that an instance keeps at hand (sets never change: only their lifetime is asked each time). */
export const SET_CACHE_MEMBERS = 4_000_000;
/** Chunks (SET_CHUNK_MEMBERS members each) of sets larger than SET_CACHE_MEMBERS kept per process once read: 64 × 512 KB of integer keys. */
export const SET_CHUNKS_KEPT = 64;
/** A set's lifetime starts again when it is used, written at most this often (ms; and a hundredth of its timeout): a set read many times a second costs no write each time (it may end up to this much sooner than its timeout after its last use). */
export const SET_REFRESH_MS = 1000;

// ---- files and uploads ----
/** A JSON request body arrives in full within this long (--body-timeout); an upload is held to UPLOAD_PROGRESS instead. */
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;
/** An upload keeps coming: at least this many bytes in every window (about half a KB a second), however long it takes in all. */
export const UPLOAD_PROGRESS = { windowMs: 30_000, minBytes: 16 * 1024 } as const;
/** Connections open at once at most (--max-connections); each holds a socket, a file descriptor and buffers. */
export const DEFAULT_MAX_CONNECTIONS = 10_000;
/** Connections open at once from one address (--max-connections-per-address); no limit by default behind a proxy (--trust-proxy), whose connections all come from its address. */
export const DEFAULT_CONNECTIONS_PER_ADDRESS = 256;
/** How long an upload waits to be attached, without $timeout (spec "Limits"). */
export const DEFAULT_UPLOAD_TIMEOUT_S = 120;
/** The longest an upload may wait to be attached ($timeout): a day, so that nobody parks files for a month. */
export const MAX_UPLOAD_TIMEOUT_S = 24 * 3600;
/** Uploads waiting for an entity that one client (a session, a guest's address) may have at once (--max-pending-uploads), and their bytes (--max-pending-upload-size). */
export const DEFAULT_PENDING_UPLOADS_PER_CLIENT = 100;
export const DEFAULT_PENDING_UPLOAD_BYTES_PER_CLIENT = 1024 * 1024 * 1024;
/** Uploads waiting for an entity, everyone's together: how many, and their bytes. */
export const PENDING_UPLOADS_TOTAL = { count: 10_000, bytes: 20 * 1024 * 1024 * 1024 } as const;
/** The largest upload accepted, without --max-upload-size. */
export const DEFAULT_MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** How long a file stored by code waits for an entity to hold it before it is removed. */
export const UNCLAIMED_FILE_MS = 24 * 3600 * 1000;
/** How often expired uploads are swept (each upload sweeps too). */
export const UPLOAD_SWEEP_MS = 60_000;
/**
 * Image conversions decode the whole image: bounded in pixels (a small PNG or SVG can declare
 * 16000×16000 pixels), and made one at a time.
 */
export const MAX_CONVERTED_PIXELS = 25_000_000;
/**
 * Image conversions that may wait behind the one running, everyone's together
 * (--max-queued-conversions): past them 503. At about a third of a second a 25-megapixel
 * conversion, a conversion then waits 3 s at most.
 */
export const DEFAULT_QUEUED_CONVERSIONS = 8;
/** Image conversions one client (a session, a guest's address) may have running or waiting (--max-conversions-per-client): past them 429. */
export const DEFAULT_CONVERSIONS_PER_CLIENT = 2;

// ---- queries ----
/**
 * The default query time limit (--query-timeout): what the statements of one request may take
 * together, each at most as long (storage/budget.ts); a statement still running past it is
 * stopped (SQLite: checked as it goes, storage/sqlite.ts; PostgreSQL: statement_timeout, or a
 * cancel when the request's budget ends first), so that no request holds the event loop, or a
 * connection, longer.
 */
export const DEFAULT_QUERY_TIMEOUT_MS = 5_000;

// ---- functions and stopping ----
/** The default time limit of a function called over REST (--function-timeout). */
export const DEFAULT_FUNCTION_TIMEOUT_MS = 30_000;
/** The longest timer Node.js keeps (setTimeout takes at most 2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** On SIGTERM, in-flight requests get the function time limit plus this, then the process stops anyway. */
export const SHUTDOWN_GRACE_MS = 5_000;
/** The supervisor kills a server process still running this long after its own drain time (one that could not see the signal). */
export const SHUTDOWN_KILL_MARGIN_MS = 2_000;
/** Files are kept in chunks of this size: an upload or a download holds one chunk in memory at a time. */
export const FILE_CHUNK = 256 * 1024;
/**
 * A file still arriving is kept from the sweep for this long after its last bytes (the lease is
 * renewed as bytes arrive, at most once a minute), however slow the client: its expiry proper
 * starts when it is complete.
 */
export const UPLOAD_LEASE_MS = 10 * 60 * 1000;
/** How often at most an arriving upload renews its lease (a write per renewal). */
export const UPLOAD_LEASE_RENEW_MS = 60 * 1000;

// ---- storage ----
/**
 * Free pages (rows removed by sweeps: expired uploads, sets, sessions) an SQLite file gives back
 * to the file system per step (PRAGMA incremental_vacuum), and the steps one sweep runs at most:
 * each step holds the writer a few milliseconds, other requests go between two; what is left is
 * given back after the next sweep. 256 pages of 4 KB: 1 MB a step, 64 MB a sweep.
 */
export const RECLAIM_PAGES_PER_STEP = 256;
export const RECLAIM_STEPS_PER_SWEEP = 64;
/**
 * An SQLite file made before incremental vacuum was on is converted at start-up (one VACUUM, which
 * rewrites the whole file, holding the start) when it is smaller than this; a larger one is left as
 * it is (docs/decisions.md: run VACUUM on it once while the server is stopped).
 */
export const VACUUM_AT_START_MAX_BYTES = 64 * 1024 * 1024;
/** The size an SQLite WAL file is cut back to after a checkpoint (without it, it keeps its largest size: the 10 MB text that once went through it, twice over). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/** How long an SQLite write waits for another process's lock (without holding the event loop: it tries again and again) before 503 STORAGE_BUSY; a read's wait (in the statement: WAL readers seldom wait). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;
/** A write's tries for the lock are this far apart at most. */
export const LOCK_POLL_MAX_MS = 50;
/** A transaction retried after a conflict waits 5 ms, doubling each time up to this (with jitter). */
export const MAX_RETRY_DELAY_MS = 250;
/** Prepared statements kept per SQLite connection; the oldest is dropped past this many. */
export const STATEMENT_CACHE_SIZE = 500;
/** Statement texts a PostgreSQL server prepares (by name, on each connection that runs them); later texts are parsed at every run. */
export const PG_NAMED_STATEMENTS = 2000;
/** Connections in the PostgreSQL pool by default (--pool-size). */
export const PG_POOL_SIZE = 10;
/** How long getting a PostgreSQL connection may take (connecting, or waiting for a free one in the pool) before the request fails. */
export const PG_CONNECT_TIMEOUT_MS = 10_000;
/** How long a PostgreSQL cancel request (a statement past its request's time budget) is waited for before its connection is used again (it is sent on a connection of its own). */
export const PG_CANCEL_WAIT_MS = 2_000;
/** SQLite snapshot connections kept open while idle; more are opened when needed, and closed when given back. */
export const IDLE_SNAPSHOT_CONNECTIONS = 2;
/** SQLite snapshot connections open at once at most: past them, a request waits for one to be given back. */
export const MAX_SNAPSHOT_CONNECTIONS = 8;
/** Rows a schema change rewrites per statement (the folded text of existing rows). */
export const SCHEMA_BATCH_ROWS = 1000;

// ---- the watchdog and the supervisor ----
/**
 * The shortest stall of the event loop the function watchdog acts on, whatever the time limit:
 * shorter holds are ordinary work (a big page being serialised), and a limit this short would
 * otherwise make them fatal.
 */
export const MIN_STALL_MS = 250;
/** Function calls the watchdog watches at once; more run unwatched (the cooperative checks still apply). */
export const WATCHED_CALLS = 512;
/** --workers at most: each worker holds its own connections and caches, and more processes than cores only wait on each other. */
export const MAX_WORKERS = 64;
/** This many restarts of the server instance within this long slow the next one down (a client calling a stuck function again and again). */
/** How often the command checks that the process that started it is still there (it stops when not). */
export const PARENT_CHECK_MS = 1000;
export const RESTART_BURST = { restarts: 5, withinMs: 10_000, delayMs: 2_000 } as const;
/**
 * How many times a write unit that runs no user code (a save's own statements, an $atomic batch or
 * a selection's drop on a dataclass without events or calculated setters) is run again from the
 * start when the database stopped it for a conflict (a deadlock, a serialization failure).
 */
export const WRITE_RETRIES = 3;
/** How deep objects and arrays may nest in an object attribute's value (deeper ones are refused: each level costs stack in every later read and write). */
export const MAX_OBJECT_DEPTH = 100;
/** How deep a request's JSON body may nest: an object attribute's deepest value inside a batch of entities, and some room (deeper: refused as read, before any work or any echo of it). */
export const MAX_BODY_DEPTH = MAX_OBJECT_DEPTH + 16;
/**
 * The longest text a string attribute takes, in characters (UTF-16 code units, as JavaScript
 * counts them), without --max-text-length: a million characters is far past any name, title or
 * note (a long article is 50,000), and keeps one value, its row and the answers echoing it to a
 * few MB; longer documents belong in a blob attribute.
 */
export const DEFAULT_MAX_TEXT_LENGTH = 1_000_000;
/**
 * The longest text a unique or key string attribute takes, in bytes of UTF-8: its own index holds
 * the whole text, and PostgreSQL's B-tree refuses an entry past about 2,700 bytes (a 500 before
 * this check). The same limit on both engines, so that a project moves between them unchanged.
 */
export const MAX_UNIQUE_TEXT_BYTES = 2_000;

// ---- sessions and quotas ----
/** A session's idle timeout without --session-idle-timeout: 60 minutes (4D's default). */
export const DEFAULT_SESSION_IDLE_MINUTES = 60;
/** The shortest idle timeout user code may give a session (4D raises lower values to 60). */
export const MIN_SESSION_IDLE_MINUTES = 60;
/** The longest idle timeout a session may be given (a week): a client asking more ($directory/login) is refused, user code's value is lowered to it. */
export const MAX_SESSION_IDLE_MINUTES = 7 * 24 * 60;
/** How long an instance trusts a session it read from the database before reading it again: what another instance changed (a logout) shows within this. */
export const SESSION_CACHE_MS = 1000;
/** Sessions an instance keeps at hand at most. */
export const SESSION_CACHE_SIZE = 10_000;
/** A used session's expiry is written again only once it has moved by this much (not on every request). */
export const SESSION_TOUCH_MS = 60_000;
/** How often expired sessions (and old login-failure counts) are removed. */
export const SESSION_SWEEP_MS = 60_000;
/** Stored sessions that hold privileges, at most (--max-sessions); past it a new login answers 429. */
export const DEFAULT_MAX_SESSIONS = 10_000;
/** Stored guest sessions (a guest is stored once it keeps something: storage, entity sets), at most, every address together (--max-sessions): past it the least recently used guest gives way to a new one. */
export const DEFAULT_MAX_GUEST_SESSIONS = 10_000;
/**
 * Stored guest sessions from one client address at most (--max-guests-per-address; 0: no cap of
 * the address's own): past it that address's least recently used guest gives way. An office
 * behind one NAT address keeps 100 guests that hold something (a set, a storage) at once — a
 * guest that keeps nothing is not stored, and logged-in sessions are not guests; it takes 100
 * addresses to fill the pool of 10,000 (the probe of issue 34 used 50), and past the pool's cap
 * the least recently used guest anywhere gives way, newcomers are never refused.
 */
export const DEFAULT_MAX_GUESTS_PER_ADDRESS = 100;
/** The characters of a client address a stored session keeps (an IPv6 address with its zone is under 64). */
export const MAX_SESSION_ADDRESS = 64;
/**
 * REST requests a session may make in a minute, per instance (--max-requests-per-minute; guests
 * are counted per client address); 0: no limit, the default — clients behind one proxy share an
 * address, and a limit that fits one deployment breaks another (4D's quotas are opt-in too).
 */
export const DEFAULT_REQUESTS_PER_MINUTE = 0;
/** Entity sets one session may hold at once (--max-sets-per-session). */
export const DEFAULT_SETS_PER_SESSION = 1000;
/**
 * Entity locks one session may hold at once ($lock=true, entity.lock(); --max-locks-per-session):
 * a lock refuses every other writer, the server's own code included, for as long as its session
 * lives (up to MAX_SESSION_IDLE_MINUTES of disuse), so one session must not freeze a table.
 */
export const DEFAULT_LOCKS_PER_SESSION = 100;
/** The longest client text (User-Agent, Host) a lock keeps and shows in lockInfo. */
export const MAX_LOCK_CLIENT_TEXT = 256;
/** Failed authentify calls from one client address in a minute, past which it gets 429. */
export const LOGIN_FAILURES_PER_CLIENT = 10;
/** Failed authentify calls for one user name in a minute, past which it gets 429. */
export const LOGIN_FAILURES_PER_USER = 5;
/** The window of the login-failure counts. */
export const LOGIN_FAILURE_WINDOW_MS = 60_000;
/** Sessions listed by $info for an administrator, at most. */
export const MAX_LISTED_SESSIONS = 1000;
/** The privilege whose sessions $info shows every live session to (README, "Sessions and permissions"). */
export const ADMIN_PRIVILEGE = 'admin';
/** A one-time passcode (createOTP) lives at least this long, in seconds (4D's minimum). */
export const MIN_OTP_LIFESPAN_S = 10;
/** Passcodes one request may make, and one session may hold live at once. */
export const OTPS_PER_REQUEST = 10;
export const OTPS_PER_SESSION = 100;
/** Built-in users: names at most this long (characters), passwords at most this long (bytes: Argon2 hashes what it is given). */
export const MAX_USER_NAME = 100;
export const MAX_PASSWORD_BYTES = 1024;
/** Password checks (Argon2, 19 MiB each) running at once in one process at most: past it, a login is refused with 503. */
export const MAX_PASSWORD_CHECKS = 32;
/** Users and tokens listed by one answer at most. */
export const MAX_USERS_LISTED = 10_000;
/** API tokens one user may hold. */
export const TOKENS_PER_USER = 100;
/** A token's last use is written again once it has moved by this much (ms). */
export const TOKEN_TOUCH_MS = 60_000;

/** $method=watch streams (rest/run/handlers/watch.ts) a server process keeps open at once: past them 429. */
export const MAX_WATCH_STREAMS = 10_000;
/** …and one session (or, for a guest that keeps no cookie, one address) keeps open at once. */
export const MAX_WATCH_STREAMS_PER_CALLER = 20;
/** The events a watch stream holds for a client that does not take them, at most, before it resets: 1 MiB. */
export const MAX_WATCH_BUFFER_BYTES = 1024 * 1024;
/** The members of an entity set a watch may follow at most: each batch of changes is matched against them, for each stream. */
export const MAX_WATCHED_SET_MEMBERS = 100_000;
/** The change feed reads the commits of this many ms together (datastore/live/change-feed.ts): fewer, larger batches under load. */
export const LIVE_GATHER_MS = 5;
/** A comment on an idle watch stream this often (ms), so that proxies and clients know it lives. */
export const HEARTBEAT_MS = 15_000;
/** A webhook's lease: the instance delivering it renews it every WEBHOOK_LEASE_RENEW_MS; another takes over once it has run out. */
export const WEBHOOK_LEASE_MS = 20_000;
export const WEBHOOK_LEASE_RENEW_MS = 5_000;
/** One delivery's time to be answered (a receiver slower than that is retried). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** The events of one delivery, at most (the changes of one stamp are never split: one stamp may make more). */
export const WEBHOOK_EVENTS_PER_DELIVERY = 100;
/** The changes a webhook holds in memory while its receiver is slow or down: past them it lets go and reads them again from the data later. */
export const WEBHOOK_MAX_QUEUED_CHANGES = 10_000;
/** The retry delays of a delivery: doubling from the first to the last, then the last again, for as long as it takes. */
export const WEBHOOK_RETRY_FIRST_MS = 1_000;
export const WEBHOOK_RETRY_LAST_MS = 5 * 60_000;
/**
 * Whole answers kept while the global stamp stands still (rest/scope/answer-cache): the bytes one
 * process keeps at most (their texts as UTF-16, keys included; the least recently used go first),
 * and one answer at most (a longer one passes through, as do answers sent in slices).
 */
export const ANSWER_CACHE_BYTES = 32 * 1024 * 1024;
export const ANSWER_CACHE_ENTRY_BYTES = 512 * 1024;
/**
 * How far behind another instance's commit a kept answer may be, at most (docs/decisions.md
 * "Whole answers kept"): the stamp is read again every quarter of it while answers are asked for,
 * and a kept answer is served only within this time of a read of it that found no change.
 */
export const ANSWER_CACHE_STALENESS_MS = 100;
