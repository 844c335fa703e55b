-- OpenAI Chat Completions (POST {base}/chat/completions), the shape of
-- https://platform.openai.com/docs/api-reference/chat : messages with role/content,
-- assistant tool_calls {id, type='function', function={name, arguments (JSON text)}},
-- tool messages with tool_call_id; streaming as SSE chat.completion.chunk objects whose
-- delta.tool_calls carry a stream index; usage in the last chunk when
-- stream_options.include_usage is set. Any OpenAI-compatible server works with it.

local FINISH = {
  stop = 'stop',
  length = 'length',
  tool_calls = 'tool_calls',
  function_call = 'tool_calls',
  content_filter = 'content_filter',
}

local function messages_out(messages)
  local out = json.array()
  for _, m in ipairs(messages) do
    if m.role == 'assistant' then
      local msg = { role = 'assistant', content = m.content }
      if m.tool_calls and #m.tool_calls > 0 then
        msg.tool_calls = json.array()
        for i, c in ipairs(m.tool_calls) do
          msg.tool_calls[i] = { id = c.id, type = 'function', ['function'] = { name = c.name, arguments = c.arguments } }
        end
        if msg.content == '' then msg.content = json.null end
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

local function tools_out(tools)
  local out = json.array()
  for i, t in ipairs(tools) do
    out[i] = { type = 'function', ['function'] = { name = t.name, description = t.description, parameters = t.parameters } }
  end
  return out
end

local function usage_in(u)
  if not u then return nil end
  local prompt_details = u.prompt_tokens_details or {}
  local completion_details = u.completion_tokens_details or {}
  return {
    prompt_tokens = u.prompt_tokens,
    completion_tokens = u.completion_tokens,
    total_tokens = u.total_tokens,
    -- DeepSeek's older spelling, for OpenAI-compatible servers that only send that.
    cache_read_tokens = prompt_details.cached_tokens or u.prompt_cache_hit_tokens,
    reasoning_tokens = completion_details.reasoning_tokens,
  }
end

local function error_in(e)
  if type(e) == 'table' then return { message = e.message or json.encode(e) } end
  return { message = tostring(e) }
end

return {
  name = 'openai',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://api.openai.com/v1',
  stream_format = 'sse',

  headers = function(api_key)
    if api_key == nil or api_key == '' then return {} end
    return { authorization = 'Bearer ' .. api_key }
  end,

  transform_request = function(req)
    local body = {
      model = req.model,
      messages = messages_out(req.messages),
      temperature = req.temperature,
      max_tokens = req.max_tokens,
      stream = req.stream,
    }
    if req.tools and #req.tools > 0 then
      body.tools = tools_out(req.tools)
      body.tool_choice = req.tool_choice or 'auto'
    end
    if req.stream then body.stream_options = { include_usage = true } end
    return body
  end,

  transform_response = function(body)
    if body.error then return { error = error_in(body.error) } end
    local choice = body.choices and body.choices[1]
    if not choice then return nil, 'the answer has no choices' end
    local msg = choice.message or {}
    local calls = {}
    for i, c in ipairs(msg.tool_calls or {}) do
      local f = c['function'] or {}
      calls[i] = { id = c.id, name = f.name, arguments = f.arguments }
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
    if chunk.error then
      local e = error_in(chunk.error)
      return { { type = 'error', message = e.message } }
    end
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
