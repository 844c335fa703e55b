import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { callFailure, describe, renderCallResult } from '../../../../plugins/mcp/call-result.js';

t.test('content rendering', async (t) => {
  t.equal(
    renderCallResult({
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    }),
    'one\ntwo',
  );
  t.equal(renderCallResult({ content: [{ type: 'audio', mimeType: 'audio/wav', data: 'AAAA' }] }), '[audio audio/wav, 3 bytes]');
  t.equal(renderCallResult({ content: [{ type: 'image', data: 'AA==' }] }), '[image of unknown type, 1 bytes]');
  t.equal(
    renderCallResult({ content: [{ type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAAAA==' } }] }),
    '[resource file:///a.bin, binary, 4 bytes]',
  );
  t.equal(renderCallResult({ content: [{ type: 'hologram' }] }), '[hologram content]');
  t.equal(renderCallResult({ content: [], structuredContent: { a: 1 } }), '{"a":1}');
  t.equal(
    renderCallResult({ content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 } }),
    'x',
    'text wins over structured content',
  );
  t.equal(renderCallResult({ toolResult: { old: true } }), '{"old":true}', 'pre-2024-11-05 answers');
  t.equal(renderCallResult({ content: [] }), '');
  t.equal(renderCallResult({ content: [null, 7, { type: 'text' }] }), '', 'junk parts are dropped');
});

t.test('failures', async (t) => {
  t.match(callFailure('s', new McpError(ErrorCode.RequestTimeout, 'timed out'), 500, false).info, {
    reason: 'timeout',
    detail: /within 500 ms/,
  });
  t.match(callFailure('s', new McpError(ErrorCode.ConnectionClosed, 'closed'), 500, false).info, { reason: 'unavailable' });
  t.match(callFailure('s', new McpError(ErrorCode.InvalidParams, 'bad x'), 500, false).info, {
    reason: 'failed',
    detail: /MCP server s: .*bad x/,
  });
  t.match(callFailure('s', new Error('anything'), 500, true).info, { reason: 'failed', detail: /cancelled/ }, 'an abort wins');
  t.match(callFailure('s', 'a string', 500, false).info, { reason: 'failed', detail: 'MCP server s: a string' });
});

t.test('describe', async (t) => {
  t.equal(describe(new Error('fetch failed', { cause: new Error('connect ECONNREFUSED') })), 'fetch failed (connect ECONNREFUSED)');
  t.equal(describe(new StreamableHTTPError(401, 'Error POSTing')), 'HTTP 401: Streamable HTTP error: Error POSTing');
  t.equal(describe(42), '42');
});
