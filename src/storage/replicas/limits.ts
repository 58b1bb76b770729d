// The replicas' defaults, apart from the router so that the command line reads them without loading pg.

/** A replica further behind the primary than this (ms) is left out until it catches up (--db-replica-max-lag). */
export const DEFAULT_REPLICA_MAX_LAG_MS = 2_000;
/** How often each replica is checked (up, a standby, how far behind), in ms. */
export const REPLICA_CHECK_MS = 200;
/** A replica that does not answer the question of its position within this (ms) is left out (a host gone silent: its TCP connection would hang for minutes). */
export const REPLICA_ANSWER_MS = 2_000;
