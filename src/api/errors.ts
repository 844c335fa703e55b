/** The error every failed control call and every failed input answers with, on every wire. */

export interface ErrorEnvelope {
  /**
   * An HA_ERR_* code of the catalogue (src/shared/errors.ts with the built-ins' error-codes.ts);
   * an installed plugin's own codes pass through as they are.
   */
  code: string;
  message: string;
}
