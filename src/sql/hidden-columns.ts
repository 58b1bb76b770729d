// The hidden columns every dataclass table has: the compiler reads and writes them, the schema
// sync creates them. Here, in sql/, so that the compiler need not import storage/.

/** the entity's stamp (4D's __STAMP): 1 when created, increased by every save */
export const STAMP_COLUMN = '__stamp';
/** the time of the entity's last save (milliseconds since the epoch) */
export const TIMESTAMP_COLUMN = '__timestamp';
/** the datastore's modification counter (the dialect says what it is: a one-row table, a sequence); a page reads it in its statement */
export const GLOBAL_STAMP_TABLE = '__dataset_global_stamp';
