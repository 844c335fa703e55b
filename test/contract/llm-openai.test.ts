import { API_KEY, CONTRACT_REQUEST, languageModelContract, type OpenAiMessage, usage } from './language-model.contract.js';

// OpenAI-compatible APIs: the built-in TypeScript provider on the OpenAI and DeepSeek shapes.
languageModelContract({
  adapter: 'openai',
  provider: 'openai',
  fixtures: 'openai',
  model: 'gpt-4o-mini',
  plain: { file: 'deepseek-chat.json', text: '客厅的灯已经打开了。', usage: usage(1024, 9, 1033, 768), model: 'deepseek-chat' },
  stream: { file: 'deepseek-chat-stream.sse', text: "Good morning! It's 18°C in the kitchen.", usage: usage(412, 11, 423, 384) },
  tools: {
    file: 'openai-tool-calls.json',
    calls: [
      { name: 'get_temperature', args: { room: 'bedroom' }, id: 'call_Qh4Zs8Tn1mB6vK2xR9pW3cLy' },
      { name: 'get_humidity', args: { room: 'bathroom' }, id: 'call_Vd7Ng3Jr5kP0wX8aT2mE6bHs' },
    ],
    text: '',
    usage: usage(118, 48, 166),
  },
  tools_stream: {
    file: 'parallel-tool-calls-stream.sse',
    calls: [
      { name: 'get_temperature', args: { room: 'bedroom' }, id: 'call_0c1b7f5e2a9d4e38b6a1c3d5' },
      { name: 'get_humidity', args: { room: 'bathroom' }, id: 'call_9e4a2d7c1f3b4a6e8d0c2b5f' },
    ],
  },
  errors: [
    { status: 401, file: 'openai-error-401.json', kind: 'auth' },
    { status: 429, file: 'openai-error-429.json', kind: 'rate_limit', retry_after: '20' },
    { status: 503, file: 'deepseek-error-503.json', kind: 'server' },
    {
      status: 400,
      body: '{"error":{"message":"Invalid value for temperature","type":"invalid_request_error","param":"temperature","code":null}}',
      kind: 'bad_request',
    },
  ],
  request(t, sent, body) {
    t.equal(sent.path, '/chat/completions');
    t.equal(sent.headers.authorization, `Bearer ${API_KEY}`);
    t.equal(body.model, 'gpt-4o-mini');
    t.equal(body.stream, false);
    t.equal(body.temperature, 0.4);
    t.equal(body.max_tokens, 512);
    const messages = body.messages as OpenAiMessage[];
    t.same(
      messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    t.same(messages[2]?.tool_calls, [
      { id: 'call_k1', type: 'function', function: { name: 'get_light', arguments: '{"room":"kitchen"}' } },
    ]);
    t.equal(messages[2]?.content, null, 'an assistant turn with only tool calls has null content');
    t.equal(messages[3]?.tool_call_id, 'call_k1');
    const tools = body.tools as Array<{ type: string; function: { name: string; parameters: unknown } }>;
    t.same(
      tools.map((x) => [x.type, x.function.name]),
      CONTRACT_REQUEST.tools?.map((x) => ['function', x.name]),
    );
    t.same(tools[0]?.function.parameters, CONTRACT_REQUEST.tools?.[0]?.parameters, 'parameters pass through unchanged');
    t.equal(body.tool_choice, 'auto');
  },
  stream_request(t, sent, body) {
    t.equal(sent.path, '/chat/completions');
    t.equal(body.stream, true);
    t.same(body.stream_options, { include_usage: true });
  },
});
