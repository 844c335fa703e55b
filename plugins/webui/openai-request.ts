/**
 * Reads the body of POST /v1/chat/completions into what HomeAgent needs: the text of the last user
 * message (the input) and the messages before it (the conversation the client keeps, given to the
 * agent as `meta.history`). Checked by hand rather than by a JSON schema so every refusal names the
 * offending field the way an OpenAI client shows it (`messages[2].content`).
 *
 * Accepted and ignored on purpose: `model` (HomeAgent answers as plugin.webui.model_name whatever
 * the client asks for), `temperature`, `top_p`, `max_tokens`, `max_completion_tokens`, `stop`,
 * `user`, `tool_choice` and the like: HomeAgent's own settings (core.llm.*, core.agent.*) decide how
 * the model is called, because the request drives a whole agent turn with its own tool loop, not
 * one model call. What HomeAgent cannot honour is refused instead of silently ignored: tools of the
 * client (HomeAgent runs its own tools on the server and cannot call the client's), images and other
 * non-text content, more than one choice.
 */
import { HomeAgentError } from '../../src/sdk/index.js';

/** A message of the client's conversation as the agent takes it (`meta.history`). */
export interface HistoryMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatCompletionRequest {
  /** The last user message: the input the agent answers. */
  text: string;
  /** The messages before it, tool messages and empty assistant turns left out. */
  history: HistoryMessage[];
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with the usage before [DONE]. */
  include_usage: boolean;
}

type Role = HistoryMessage['role'] | 'tool' | 'function';

/** `developer` is what newer OpenAI clients send instead of `system`; it means the same here. */
const ROLES: Record<string, Role> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
  function: 'function',
};

function invalid(message: string, param: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', message, { details: { param } });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The text of a message's content: a string, or an array of parts of which only text parts are
 * accepted (joined by new lines). null or absent content is empty (an assistant turn that only
 * called tools).
 */
export function contentText(content: unknown, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of content parts`, param);
  const texts: string[] = [];
  for (const [i, part] of content.entries()) {
    const where = `${param}[${i}]`;
    if (!isObject(part)) throw invalid(`${where} must be a content part object`, where);
    if (part.type === 'text') {
      if (typeof part.text !== 'string') throw invalid(`${where}.text must be a string`, `${where}.text`);
      texts.push(part.text);
    } else if (part.type === 'image_url' || part.type === 'image') {
      throw invalid(`${where}: image content is not supported: HomeAgent's chat endpoint takes text only`, where);
    } else {
      throw invalid(`${where}: content parts of type ${JSON.stringify(part.type)} are not supported; send text parts only`, where);
    }
  }
  return texts.join('\n');
}

function optionalBoolean(value: unknown, param: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`${param} must be true or false`, param);
  return value;
}

/** A client that brings its own tools expects to run them itself; HomeAgent never hands a call back. */
function refuseClientTools(body: Record<string, unknown>): void {
  for (const param of ['tools', 'functions']) {
    const value = body[param];
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value)) throw invalid(`${param} must be an array`, param);
    if (value.length > 0) throw invalid('client-side tools are not supported: HomeAgent runs its own tools on the server', param);
  }
}

/** Validates and converts a chat completion request; throws HA_ERR_RPC_INVALID_PARAMS naming the field. */
export function parseChatRequest(body: unknown): ChatCompletionRequest {
  if (!isObject(body)) throw invalid('the request body must be a JSON object', 'body');
  if (body.model !== undefined && typeof body.model !== 'string') throw invalid('model must be a string', 'model');
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw invalid('n must be 1: HomeAgent gives one answer', 'n');
  refuseClientTools(body);
  const stream = optionalBoolean(body.stream, 'stream');
  let include_usage = false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!isObject(body.stream_options)) throw invalid('stream_options must be an object', 'stream_options');
    include_usage = optionalBoolean(body.stream_options.include_usage, 'stream_options.include_usage');
  }

  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  const converted: Array<{ role: Role; content: string }> = [];
  for (const [i, message] of messages.entries()) {
    const where = `messages[${i}]`;
    if (!isObject(message)) throw invalid(`${where} must be an object`, where);
    const role = typeof message.role === 'string' ? ROLES[message.role] : undefined;
    if (role === undefined) {
      throw invalid(
        `${where}.role must be one of system, developer, user, assistant, tool (got ${JSON.stringify(message.role)})`,
        `${where}.role`,
      );
    }
    if ((role === 'system' || role === 'user') && (message.content === undefined || message.content === null)) {
      throw invalid(`${where}.content is required for a ${message.role} message`, `${where}.content`);
    }
    converted.push({ role, content: contentText(message.content, `${where}.content`) });
  }

  const last = converted.at(-1);
  if (last?.role !== 'user') throw invalid(`the last message must be from the user (messages[${converted.length - 1}] is not)`, 'messages');
  if (last.content.trim() === '')
    throw invalid(`messages[${converted.length - 1}].content is empty`, `messages[${converted.length - 1}].content`);

  const history: HistoryMessage[] = [];
  for (const { role, content } of converted.slice(0, -1)) {
    // Tool results belong to the client's own tool loop; HomeAgent's model never asked for them.
    if (role === 'tool' || role === 'function') continue;
    if (role === 'assistant' && content === '') continue;
    history.push({ role, content });
  }
  return { text: last.content, history, stream, include_usage };
}
