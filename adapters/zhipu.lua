-- Zhipu AI GLM (BigModel open platform, POST https://open.bigmodel.cn/api/paas/v4/chat/completions),
-- the shape of https://docs.bigmodel.cn/api-reference/模型-api/对话补全 : OpenAI-like with
--  * temperature in [0, 1] (older GLM-4 models refuse exactly 0, so it is kept just above);
--  * tool_choice only "auto": "none" is expressed by offering no tools;
--  * reasoning_content from the thinking models (GLM-4.5 and later);
--  * streamed tool calls arrive whole in one chunk (id, index, name and all arguments);
--  * the last stream chunk carries finish_reason and usage together; answers have request_id;
--  * errors {error = {code (a string such as "1113"), message (often Chinese)}}.

local FINISH = {
  stop = 'stop',
  length = 'length',
  tool_calls = 'tool_calls',
  sensitive = 'content_filter',
  network_error = 'error',
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
  local details = u.prompt_tokens_details or {}
  return {
    prompt_tokens = u.prompt_tokens,
    completion_tokens = u.completion_tokens,
    total_tokens = u.total_tokens,
    cache_read_tokens = details.cached_tokens,
  }
end

local function error_in(e)
  return { message = (e.code and (tostring(e.code) .. ': ') or '') .. (e.message or json.encode(e)) }
end

return {
  name = 'zhipu',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://open.bigmodel.cn/api/paas/v4',
  stream_format = 'sse',

  headers = function(api_key)
    return { authorization = 'Bearer ' .. (api_key or '') }
  end,

  transform_request = function(req)
    local body = {
      model = req.model ~= '' and req.model or 'glm-4-flash',
      messages = messages_out(req.messages),
      max_tokens = req.max_tokens,
      stream = req.stream,
    }
    if req.temperature then body.temperature = math.max(0.01, math.min(req.temperature, 1)) end
    if req.tools and #req.tools > 0 and req.tool_choice ~= 'none' then
      body.tools = json.array()
      for i, t in ipairs(req.tools) do
        body.tools[i] = { type = 'function', ['function'] = { name = t.name, description = t.description, parameters = t.parameters } }
      end
      body.tool_choice = 'auto'
    end
    return body
  end,

  transform_response = function(body)
    if body.error then return { error = error_in(body.error) } end
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
    if chunk.error then return { { type = 'error', message = error_in(chunk.error).message } } end
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
