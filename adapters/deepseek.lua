-- DeepSeek chat completions (POST https://api.deepseek.com/chat/completions), the shape of
-- https://api-docs.deepseek.com/api/create-chat-completion : OpenAI's format plus
--  * reasoning_content (deepseek-reasoner's thinking) in the message and in stream deltas; it must
--    not be sent back in later requests (the API answers 400 when an assistant message has it);
--  * usage.prompt_cache_hit_tokens / prompt_cache_miss_tokens (context caching on disk), with
--    prompt_tokens_details.cached_tokens in newer answers;
--  * SSE streams interleaved with ": keep-alive" comments while the server is busy.

local FINISH = {
  stop = 'stop',
  length = 'length',
  tool_calls = 'tool_calls',
  content_filter = 'content_filter',
  insufficient_system_resource = 'error',
}

local function messages_out(messages)
  local out = json.array()
  for _, m in ipairs(messages) do
    if m.role == 'assistant' then
      -- No reasoning_content here: DeepSeek refuses it in input messages.
      local msg = { role = 'assistant', content = m.content }
      if m.tool_calls and #m.tool_calls > 0 then
        msg.tool_calls = json.array()
        for i, c in ipairs(m.tool_calls) do
          msg.tool_calls[i] = { id = c.id, type = 'function', ['function'] = { name = c.name, arguments = c.arguments } }
        end
      end
      out[#out + 1] = msg
    elseif m.role == 'tool' then
      out[#out + 1] = { role = 'tool', tool_call_id = m.tool_call_id, content = m.content }
    else
      out[#out + 1] = { role = m.role, content = m.content }
    end
  end
  return out
end

local function usage_in(u)
  if not u then return nil end
  local cached = u.prompt_cache_hit_tokens
  if cached == nil and u.prompt_tokens_details then cached = u.prompt_tokens_details.cached_tokens end
  local details = u.completion_tokens_details or {}
  return {
    prompt_tokens = u.prompt_tokens,
    completion_tokens = u.completion_tokens,
    total_tokens = u.total_tokens,
    cache_read_tokens = cached,
    reasoning_tokens = details.reasoning_tokens,
  }
end

return {
  name = 'deepseek',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://api.deepseek.com',
  stream_format = 'sse',

  headers = function(api_key)
    return { authorization = 'Bearer ' .. (api_key or '') }
  end,

  transform_request = function(req)
    local body = {
      model = req.model ~= '' and req.model or 'deepseek-chat',
      messages = messages_out(req.messages),
      temperature = req.temperature,
      max_tokens = req.max_tokens,
      stream = req.stream,
    }
    if req.tools and #req.tools > 0 then
      body.tools = json.array()
      for i, t in ipairs(req.tools) do
        body.tools[i] = { type = 'function', ['function'] = { name = t.name, description = t.description, parameters = t.parameters } }
      end
      body.tool_choice = req.tool_choice or 'auto'
    end
    if req.stream then body.stream_options = { include_usage = true } end
    return body
  end,

  transform_response = function(body)
    if body.error then return { error = { message = body.error.message or json.encode(body.error) } } end
    local choice = body.choices and body.choices[1]
    if not choice then return nil, 'the answer has no choices' end
    local msg = choice.message or {}
    local calls = {}
    for i, c in ipairs(msg.tool_calls or {}) do
      calls[i] = { id = c.id, name = c['function'].name, arguments = c['function'].arguments }
    end
    return {
      text = msg.content or '',
      reasoning = msg.reasoning_content or '',
      tool_calls = calls,
      usage = usage_in(body.usage),
      finish_reason = FINISH[choice.finish_reason] or 'other',
      model = body.model,
    }
  end,

  transform_stream_chunk = function(chunk)
    if type(chunk) ~= 'table' then return nil end
    if chunk.error then return { { type = 'error', message = chunk.error.message or json.encode(chunk.error) } } end
    local parts = {}
    local choice = chunk.choices and chunk.choices[1]
    if choice then
      local d = choice.delta or {}
      if d.reasoning_content and d.reasoning_content ~= '' then
        parts[#parts + 1] = { type = 'reasoning-delta', delta = d.reasoning_content }
      end
      if d.content and d.content ~= '' then parts[#parts + 1] = { type = 'text-delta', delta = d.content } end
      for _, c in ipairs(d.tool_calls or {}) do
        local f = c['function'] or {}
        parts[#parts + 1] = { type = 'tool-call-delta', index = c.index or 0, id = c.id, name = f.name, arguments_delta = f.arguments or '' }
      end
      if choice.finish_reason then
        parts[#parts + 1] = { type = 'finish', reason = FINISH[choice.finish_reason] or 'other', model = chunk.model }
      end
    end
    if chunk.usage then parts[#parts + 1] = { type = 'usage', usage = usage_in(chunk.usage) } end
    return parts
  end,
}
