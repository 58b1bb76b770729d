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
