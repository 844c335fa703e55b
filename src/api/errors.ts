/** The error every failed control call and every failed input answers with, on every wire. */

export interface ErrorEnvelope {
  /** An HA_ERR_* code of the catalogue in src/shared/errors.ts (a plugin's own codes pass through as they are). */
  code: string;
  message: string;
}
