/**
 * The wire shape of the webui plugin's control method webui.credentials, as
 * `homeagentctl webui credentials` reads it.
 */

export interface WebuiCredentials {
  url: string;
  /** The admin's, for the login page. */
  password: string;
  /** For programs (X-API-Key or Authorization: Bearer), the OpenAI-compatible endpoint included. */
  api_key: string;
  created_at: string;
}
