/**
 * The error codes the web page's HTTP server (plugins/webui/http-errors.ts maps each to a status) throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_HTTP_HOST: 'the Host header does not name this machine (DNS rebinding protection; add the name to plugin.webui.allowed_hosts)',
  HA_ERR_HTTP_CROSS_SITE: 'a state-changing request with the session cookie did not come from the web page itself',
  HA_ERR_HTTP_AUTH: 'not logged in, the session ended, or the password or API key is wrong',
  HA_ERR_HTTP_LOGIN_LIMIT: 'too many failed logins from this address; wait before trying again',
  HA_ERR_HTTP_NOT_FOUND: 'no route or file with that path',
  HA_ERR_HTTP_BAD_REQUEST: 'the HTTP request is malformed (bad JSON, headers or URL)',
  HA_ERR_HTTP_BODY_TOO_LARGE: 'the request body is larger than the limit',
  HA_ERR_HTTP_MEDIA_TYPE: 'the request body has a content type this route does not accept',
  HA_ERR_HTTP_TIMEOUT: 'the request did not arrive within the time limit',
} as const;
