/**
 * Turns what an MCP server answers (or throws) for tools/call into what the model reads: the
 * text parts joined, other parts summarised in one line each (a model cannot use base64 image
 * data, and it would only fill the context), and failures as {@link ToolError}s.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../../src/sdk/index.js';

/** The text the model gets for a call result's content; structured content stands in when there is no text. */
export function renderCallResult(result: Record<string, unknown>): string {
  const parts: string[] = [];
  if (Array.isArray(result.content)) {
    for (const part of result.content) parts.push(renderPart(part));
  } else if ('toolResult' in result) {
    // Servers from before protocol 2024-11-05 answer with a bare toolResult.
    parts.push(jsonText(result.toolResult));
  }
  const text = parts.filter((part) => part !== '').join('\n');
  if (text === '' && result.structuredContent !== undefined) return jsonText(result.structuredContent);
  return text;
}

function renderPart(part: unknown): string {
  if (typeof part !== 'object' || part === null) return '';
  const p = part as Record<string, unknown>;
  switch (p.type) {
    case 'text':
      return typeof p.text === 'string' ? p.text : '';
    case 'image':
    case 'audio':
      return `[${p.type} ${stringOr(p.mimeType, 'of unknown type')}, ${base64Bytes(p.data)} bytes]`;
    case 'resource': {
      const resource = (typeof p.resource === 'object' && p.resource !== null ? p.resource : {}) as Record<string, unknown>;
      const uri = stringOr(resource.uri, 'unknown');
      if (typeof resource.text === 'string') return `[resource ${uri}]\n${resource.text}`;
      return `[resource ${uri}, ${stringOr(resource.mimeType, 'binary')}, ${base64Bytes(resource.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link ${[p.name, p.uri].filter((v) => typeof v === 'string' && v !== '').join(' ')}]`;
    default:
      return `[${stringOr(p.type, 'unknown')} content]`;
  }
}

/**
 * A failed tools/call as the model reads it. `timeoutMs` is the timeout the call was given;
 * `aborted` tells whether the caller's signal (task cancelled, executor timeout) ended it.
 */
export function callFailure(server: string, error: unknown, timeoutMs: number, aborted: boolean): ToolError {
  if (aborted) return new ToolError({ reason: 'failed', detail: `the call to MCP server ${server} was cancelled` });
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return new ToolError({
        reason: 'timeout',
        detail: `MCP server ${server} did not answer within ${timeoutMs} ms; the call was cancelled`,
        hint: 'try again with less work per call, or later',
      });
    }
    if (error.code === ErrorCode.ConnectionClosed) {
      return new ToolError({ reason: 'unavailable', detail: `MCP server ${server} closed the connection`, hint: 'try again later' });
    }
    return new ToolError({ reason: 'failed', detail: `MCP server ${server}: ${error.message}` });
  }
  return new ToolError({ reason: 'failed', detail: `MCP server ${server}: ${describe(error)}` });
}

/** A readable one-line description of an error, including the network cause `fetch failed` hides. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? describe(error.cause) : undefined;
  let text = cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
  // The HTTP status is the useful part of a refused request ("401"), and the SDK leaves it out of the message.
  if (error instanceof StreamableHTTPError && error.code !== undefined && !text.includes(String(error.code)))
    text = `HTTP ${error.code}: ${text}`;
  return text;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? '';
}
