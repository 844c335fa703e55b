/** Process exit codes, from sysexits(3) so that systemd and shell scripts can tell causes apart. */
export const EXIT_CODES = {
  OK: 0,
  /** Generic failure, e.g. the daemon answered a CLI request with an error. */
  FAILURE: 1,
  /** Command-line usage error. */
  USAGE: 64,
  /** Input data was invalid (bad backup file). */
  DATA_ERROR: 65,
  /** A required service is unavailable: the daemon is not running. */
  UNAVAILABLE: 69,
  /** Internal software error: a migration or a critical service failed. */
  SOFTWARE: 70,
  /** Temporary failure: another daemon holds the data directory. */
  TEMP_FAIL: 75,
  /** Configuration error: the daemon refuses to start. */
  CONFIG: 78,
} as const;
