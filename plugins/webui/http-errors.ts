/**
 * Every error the web server answers is the one envelope `{ok:false, error:{code, message}}` with
 * an HTTP status that follows the code (docs/webui-api.md, Envelope). Route modules only throw
 * HomeAgentErrors; fastify's own errors (body too large, bad JSON, unknown route, malformed
 * requests) are translated here so that a client never sees fastify's own error shape.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, type ErrorEnvelope, HomeAgentError, isHomeAgentError, type Logger } from '../../src/sdk/index.js';

/** Codes whose status is not given by the suffix rules of {@link statusForCode}. */
const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  HA_ERR_RPC_BAD_REQUEST: 400,
  HA_ERR_CHANGE_STATE: 409,
  HA_ERR_TRACKER_OFF: 503,
  HA_ERR_RPC_INVALID_PARAMS: 400,
  HA_ERR_HTTP_BAD_REQUEST: 400,
  HA_ERR_SETTINGS_INVALID_VALUE: 400,
  HA_ERR_SETTINGS_FILE_ONLY: 400,
  HA_ERR_CONFIG_INVALID: 400,
  HA_ERR_INPUT_INVALID: 400,
  HA_ERR_KNOWLEDGE_NAME: 400,
  HA_ERR_KNOWLEDGE_TOO_LARGE: 400,
  HA_ERR_MEDIA_TYPE: 400,
  HA_ERR_MEDIA_TOO_LARGE: 400,
  HA_ERR_ENTITY_SERVICE: 400,
  HA_ERR_ENTITY_AMBIGUOUS: 400,
  HA_ERR_LIST_INVALID: 400,
  HA_ERR_LIST_AMBIGUOUS: 400,
  HA_ERR_LIST_FULL: 409,
  HA_ERR_AUTOMATION_CONFIG: 400,
  HA_ERR_TOOL_INVALID_ARGS: 400,
  HA_ERR_TIMER: 400,
  HA_ERR_STAGE_UNKNOWN: 400,
  HA_ERR_IO_CAPABILITY: 400,
  HA_ERR_PLUGIN_MANIFEST: 400,
  HA_ERR_PLUGIN_INSTALL: 400,
  HA_ERR_GPIO_CONFIG: 400,
  HA_ERR_GPIO_DIRECTION: 400,
  HA_ERR_MQTT_TOPIC: 400,
  HA_ERR_MQTT_PAYLOAD: 400,
  // A sequence run from the page (api-sequences.ts): wrong arguments are the caller's; a sequence
  // changed while its approval was shown is a conflict.
  HA_ERR_SEQ_ARGS: 400,
  HA_ERR_SEQ_INVALID: 400,
  HA_ERR_SEQ_CHANGED: 409,
  // Zigbee2MQTT understood a management request from the page (api-zigbee.ts) and refused it
  // (an unknown device, a sleeping one removed without force): its wording says why.
  HA_ERR_ZIGBEE_REQUEST: 422,
  HA_ERR_HTTP_AUTH: 401,
  HA_ERR_HTTP_HOST: 403,
  HA_ERR_HTTP_CROSS_SITE: 403,
  HA_ERR_PLUGIN_PERMISSION: 403,
  HA_ERR_RPC_FORBIDDEN: 403,
  HA_ERR_CMD_DENIED: 403,
  HA_ERR_FILES_DENIED: 403,
  HA_ERR_TOOL_REJECTED: 403,
  HA_ERR_SETTINGS_UNKNOWN_KEY: 404,
  HA_ERR_IO_CHANNEL_UNKNOWN: 404,
  HA_ERR_CONFIRMATION_UNKNOWN: 404,
  HA_ERR_PLUGIN_STATE: 409,
  HA_ERR_CONFIRMATION_REQUIRED: 409,
  HA_ERR_INPUT_DROPPED: 409,
  HA_ERR_INPUT_DUPLICATE: 409,
  HA_ERR_HTTP_BODY_TOO_LARGE: 413,
  HA_ERR_RPC_FRAME_TOO_LARGE: 413,
  HA_ERR_HTTP_MEDIA_TYPE: 415,
  HA_ERR_HTTP_LOGIN_LIMIT: 429,
  HA_ERR_INPUT_QUEUE_FULL: 429,
  HA_ERR_HTTP_TIMEOUT: 408,
  // A route calling a control method this daemon does not have: the service is missing.
  HA_ERR_RPC_UNKNOWN_METHOD: 503,
  HA_ERR_RPC_BUSY: 503,
  HA_ERR_ABORTED: 503,
  HA_ERR_PLUGIN_DEAD: 503,
  HA_ERR_LLM_ALL_FAILED: 503,
  HA_ERR_LLM_RATE_LIMITED: 503,
};

/**
 * The HTTP status of an error code. Codes added later by other modules get a sensible status from
 * their name: `..._NOT_FOUND` 404, `..._EXISTS` 409, `..._UNAVAILABLE` 503, `..._TIMEOUT` 504.
 */
export function statusForCode(code: string): number {
  const known = STATUS_BY_CODE[code as ErrorCode];
  if (known !== undefined) return known;
  if (code.endsWith('_NOT_FOUND')) return 404;
  if (code.endsWith('_EXISTS')) return 409;
  if (code.endsWith('_UNAVAILABLE')) return 503;
  if (code.endsWith('_TIMEOUT')) return 504;
  return 500;
}

/** The envelope body of an error. */
export function errorBody(error: ErrorEnvelope): { ok: false; error: ErrorEnvelope } {
  return { ok: false, error: { code: error.code, message: error.message } };
}

/** Sends an error as the envelope with the status of its code. */
export function sendError(reply: FastifyReply, error: HomeAgentError): FastifyReply {
  const status = statusForCode(error.code);
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="homeagent"');
  // Also for errors raised before the hooks ran (a URL fastify could not decode).
  reply.header('x-content-type-options', 'nosniff');
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  return reply.code(status).type('application/json; charset=utf-8').send(errorBody(error));
}

/** What a thrown value becomes on the wire; `undefined` for an unexpected failure (a 500). */
export function toHttpError(error: unknown, request: FastifyRequest): HomeAgentError | undefined {
  if (isHomeAgentError(error)) return error;
  const fastifyError = error as Partial<FastifyError> | undefined;
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HomeAgentError(
        'HA_ERR_HTTP_BODY_TOO_LARGE',
        `the request body is larger than this route accepts (${request.routeOptions.bodyLimit ?? '?'} bytes; plugin.webui.body_limit_bytes, or upload_limit_bytes for uploads)`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HomeAgentError(
        'HA_ERR_HTTP_MEDIA_TYPE',
        `this route does not accept a body of type ${JSON.stringify(request.headers['content-type'] ?? '')}; send application/json`,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HomeAgentError(
        'HA_ERR_HTTP_BAD_REQUEST',
        'the body is empty but its Content-Type says JSON; send a JSON object or no Content-Type',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HomeAgentError('HA_ERR_HTTP_BAD_REQUEST', 'the body is not valid JSON, but its Content-Type says it is');
    case 'FST_ERR_VALIDATION':
      return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', fastifyError.message ?? 'the request does not match the route schema');
  }
  // Other client errors of fastify or its body parser (invalid Content-Length, JSON syntax, ...).
  const status = fastifyError?.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    const code: ErrorCode =
      status === 413 ? 'HA_ERR_HTTP_BODY_TOO_LARGE' : status === 415 ? 'HA_ERR_HTTP_MEDIA_TYPE' : 'HA_ERR_HTTP_BAD_REQUEST';
    return new HomeAgentError(code, `the request was refused: ${fastifyError?.message ?? 'bad request'}`);
  }
  return undefined;
}

/** The error and not-found handlers of the whole server (route scopes may set their own, as /v1 does). */
export function installErrorHandlers(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((error, request, reply) => {
    const known = toHttpError(error, request);
    if (known) return sendError(reply, known);
    log.error({ err: error, method: request.method, route: request.routeOptions.url }, 'web request failed');
    return sendError(reply, new HomeAgentError('HA_ERR_INTERNAL', 'the request failed; the HomeAgent log has the details'));
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new HomeAgentError('HA_ERR_HTTP_NOT_FOUND', `no route ${request.method} ${pathOf(request.url)}`)),
  );
}

/** Errors before routing (a URL fastify cannot decode): the same envelope. */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void sendError(reply, new HomeAgentError('HA_ERR_HTTP_BAD_REQUEST', `the request was refused: ${error.message}`));
}

/**
 * A request the HTTP parser refused (malformed, headers too large, not complete in time): the
 * envelope written straight to the socket, which is then closed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let envelope: ErrorEnvelope = { code: 'HA_ERR_HTTP_BAD_REQUEST', message: 'the HTTP request is malformed' };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    envelope = { code: 'HA_ERR_HTTP_TIMEOUT', message: 'the request headers or body did not arrive in time' };
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    envelope = { code: 'HA_ERR_HTTP_BAD_REQUEST', message: 'the request headers are too large' };
  }
  if (socket.writable) {
    const body = JSON.stringify(errorBody(envelope));
    socket.write(
      `HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** The path of a request URL without its query (query strings may carry secrets and never go into messages or logs). */
export function pathOf(url: string): string {
  const end = url.indexOf('?');
  return end === -1 ? url : url.slice(0, end);
}
