import { languageModelContract, usage } from './language-model.contract.js';

type OllamaMessage = {
  role: string;
  content: string;
  tool_calls?: Array<{ function: { name: string; arguments: unknown } }>;
  tool_name?: string;
};

// Ollama's native API: the built-in TypeScript provider on its recorded fixtures.
languageModelContract({
  adapter: 'ollama',
  provider: 'ollama',
  stream_format: 'ndjson',
  fixtures: 'ollama',
  model: 'qwen2.5:3b',
  plain: { file: 'chat-plain.json', text: 'Hello! How can I help at home today?', usage: usage(26, 11), model: 'qwen2.5:3b' },
  stream: { file: 'chat-stream.ndjson', text: 'The living room is 21°C.', usage: usage(31, 8) },
  tools: {
    file: 'chat-tool-call.json',
    calls: [
      { name: 'set_light', args: { room: 'kitchen', on: true } },
      { name: 'get_temperature', args: { room: 'bedroom' } },
    ],
    text: '',
    usage: usage(187, 41),
  },
  tools_stream: {
    file: 'chat-tool-call-stream.ndjson',
    calls: [{ name: 'set_light', args: { room: 'kitchen', on: true }, id: 'call_k3n9v2pa' }],
  },
  errors: [
    { status: 404, file: 'error-model-not-found.json', kind: 'bad_request' },
    { status: 401, body: '{"error":"unauthorized"}', kind: 'auth' },
    { status: 500, body: '{"error":"llama runner process has terminated: exit status 2"}', kind: 'server' },
    { status: 503, body: '{"error":"server busy, please try again.  maximum pending requests exceeded"}', kind: 'server' },
  ],
  request(t, sent, body) {
    t.equal(sent.path, '/api/chat');
    t.equal(body.model, 'qwen2.5:3b');
    t.equal(body.stream, false);
    t.same(body.options, { temperature: 0.4, num_predict: 512 });
    const messages = body.messages as OllamaMessage[];
    t.same(
      messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    t.same(messages[2]?.tool_calls, [{ function: { name: 'get_light', arguments: { room: 'kitchen' } } }], 'arguments are an object');
    t.equal(messages[3]?.tool_name, 'get_light');
    const tools = body.tools as Array<{ type: string; function: { name: string } }>;
    t.same(
      tools.map((x) => x.function.name),
      ['set_light', 'get_temperature', 'list_rooms'],
    );
  },
  stream_request(t, sent, body) {
    t.equal(sent.path, '/api/chat');
    t.equal(body.stream, true);
  },
});
