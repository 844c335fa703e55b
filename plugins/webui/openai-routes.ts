/**
 * The OpenAI-compatible endpoint: GET /v1/models and POST /v1/chat/completions, so that any OpenAI
 * client can talk to HomeAgent as if it were a model. A request is one agent turn: the last user
 * message is the input, the messages before it the conversation (`meta.history`, which the agent
 * uses instead of the channel's own), and the agent's tool loop runs here on the server; the client
 * only sees the answer.
 *
 * The routes live in their own encapsulated scope so that their errors (validation, the security
 * hooks' 401/403, timeouts) come in OpenAI's error shape, which OpenAI clients understand, instead
 * of HomeAgent's envelope.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PluginContext, PluginInput } from '../../src/sdk/index.js';
import { pathOf } from './http-errors.js';
import { errorHeaders, type OpenAiError, receiptError, toOpenAiError } from './openai-errors.js';
import { parseChatRequest } from './openai-request.js';
import { type CompletionIdentity, completionBody, completionIdentity, openAiErrorBody, usageOf } from './openai-response.js';
import { ChunkWriter, StreamedAnswer } from './openai-stream.js';
import { awaitReceipt } from './receipt-wait.js';
import { type RouteDeps, type RouteModule, requestSender } from './types.js';

const OPENAI_TIMEOUT = (ms: number) =>
  `no answer within plugin.webui.chat_timeout_ms (${ms} ms); the request goes on and its answer is kept in memory`;

/** Source and channel of the inputs; the channel has no output of its own: answers go back in the response. */
const OPENAI_SOURCE = 'openai';

/** `oai_` and 24 random characters (A-Z a-z 0-9 _ -), as PluginInput ids allow. */
export function newInputId(): string {
  return `oai_${randomBytes(18).toString('base64url')}`;
}

export const openaiRoutes: RouteModule = async (app, deps) => {
  await app.register(async (scope) => registerRoutes(scope, deps), { prefix: '/v1' });
};

async function registerRoutes(scope: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { ctx } = deps;
  const startedAt = Math.floor(Date.now() / 1000);

  scope.setErrorHandler((error, request, reply) => {
    const failure = toOpenAiError(error, request);
    if (failure.status >= 500) ctx.log.warn({ err: error, path: pathOf(request.url) }, 'OpenAI-compatible request failed');
    return sendError(reply, failure);
  });
  scope.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(openAiErrorBody(404, { code: 'HA_ERR_HTTP_NOT_FOUND', message: `no route ${request.method} ${pathOf(request.url)}` })),
  );

  const model = () => ({ id: deps.settings().model_name, object: 'model' as const, created: startedAt, owned_by: 'homeagent' });
  scope.get('/models', async () => ({ object: 'list', data: [model()] }));
  scope.get<{ Params: { id: string } }>('/models/:id', async (request, reply) => {
    const offered = deps.settings().model_name;
    if (request.params.id === offered) return model();
    const message = `no model ${JSON.stringify(request.params.id)}: this server offers ${JSON.stringify(offered)}`;
    return reply.code(404).send(openAiErrorBody(404, { code: 'HA_ERR_HTTP_NOT_FOUND', message }, 'model'));
  });

  scope.post('/chat/completions', async (request, reply) => {
    const chat = parseChatRequest(request.body);
    const settings = deps.settings();
    const id = newInputId();
    const input: PluginInput = {
      id,
      source: OPENAI_SOURCE,
      channel: OPENAI_SOURCE,
      sender: requestSender(request),
      payload: chat.text,
      meta: { history: chat.history },
    };
    const identity = completionIdentity(id, settings.model_name, Date.now());
    // The wait for the agent is bounded by chat_timeout_ms, not by the server's inactivity timeout: a
    // model may think for a while before the first byte. (Injected test requests have no real socket.)
    request.raw.socket?.setTimeout?.(0);
    if (chat.stream) {
      return streamCompletion(ctx, request, reply, input, identity, {
        timeoutMs: settings.chat_timeout_ms,
        include_usage: chat.include_usage,
      });
    }
    const receipt = await awaitReceipt(ctx.io.injectInput(input), settings.chat_timeout_ms, OPENAI_TIMEOUT);
    if (receipt.status !== 'done') return sendError(reply, receiptError(receipt));
    return completionBody(identity, receipt.text ?? '', usageOf(receipt));
  });
}

function sendError(reply: FastifyReply, error: OpenAiError): FastifyReply {
  return reply.code(error.status).headers(errorHeaders(error)).send(error.body);
}

/**
 * Streams one turn: text deltas of this input as chunks while the agent works, then what is missing
 * of the final answer, finish_reason stop, the usage when asked for, [DONE]. The listener is in
 * place before the input is injected, so no delta can be missed.
 */
async function streamCompletion(
  ctx: PluginContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: PluginInput,
  identity: CompletionIdentity,
  options: { timeoutMs: number; include_usage: boolean },
): Promise<FastifyReply> {
  reply.hijack();
  const res = reply.raw;
  // Taken over from fastify, so its error handling too: a client gone mid-stream is a debug line.
  res.on('error', (error) => ctx.log.debug({ err: error, input_id: input.id }, 'OpenAI-compatible stream write failed'));
  const writer = new ChunkWriter(res, identity, reply.getHeaders() as Record<string, string | number | string[]>);
  const answer = new StreamedAnswer();
  const clientGone = new AbortController();
  const onClose = () => {
    if (!res.writableEnded) clientGone.abort();
  };
  res.on('close', onClose);
  const unsubscribe = ctx.events.subscribe('agent.text_delta', (event) => {
    if (event.input_id === input.id) writer.content(answer.add(event));
  });
  try {
    const receipt = await awaitReceipt(ctx.io.injectInput(input), options.timeoutMs, OPENAI_TIMEOUT, clientGone.signal);
    if (receipt === undefined) {
      ctx.log.info({ input_id: input.id }, 'OpenAI-compatible client went away mid-stream; the turn goes on');
    } else if (receipt.status !== 'done') {
      writer.fail(receiptError(receipt));
    } else {
      writer.content(answer.rest(receipt.text ?? ''));
      writer.finish(options.include_usage ? usageOf(receipt) : undefined);
    }
  } catch (error) {
    const failure = toOpenAiError(error, request);
    if (failure.status >= 500) ctx.log.warn({ err: error, input_id: input.id }, 'OpenAI-compatible stream failed');
    writer.fail(failure);
  } finally {
    unsubscribe();
    res.off('close', onClose);
  }
  return reply;
}
