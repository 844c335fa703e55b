-- Moonshot AI Kimi (POST https://api.moonshot.cn/v1/chat/completions; international
-- https://api.moonshot.ai/v1), the shape of https://platform.moonshot.cn/docs/api/chat :
-- OpenAI chat completions with
--  * temperature in [0, 1];
--  * tool messages that carry the function name next to tool_call_id;
--  * usage of a stream inside the last choice (choices[1].usage) rather than at the top level,
--    and cached prompt tokens as usage.cached_tokens (context caching);
--  * errors {error = {message, type}} (invalid_authentication_error, rate_limit_reached_error,
--    engine_overloaded_error, ...).

local FINISH = { stop = 'stop', length = 'length', tool_calls = 'tool_calls', content_filter = 'content_filter' }

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
      out[#out + 1] = { role = 'tool', tool_call_id = m.tool_call_id, name = m.name, content = m.content }
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
    cache_read_tokens = u.cached_tokens or details.cached_tokens,
  }
end

local function error_in(e)
  return { message = (e.type and (e.type .. ': ') or '') .. (e.message or json.encode(e)) }
end

return {
  name = 'moonshot',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://api.moonshot.cn/v1',
  stream_format = 'sse',

  headers = function(api_key)
    return { authorization = 'Bearer ' .. (api_key or '') }
  end,

  transform_request = function(req)
    local body = {
      model = req.model ~= '' and req.model or 'kimi-k2-0905-preview',
      messages = messages_out(req.messages),
      max_tokens = req.max_tokens,
      stream = req.stream,
    }
    if req.temperature then body.temperature = math.min(req.temperature, 1) end
    if req.tools and #req.tools > 0 then
      body.tools = json.array()
      for i, t in ipairs(req.tools) do
        body.tools[i] = { type = 'function', ['function'] = { name = t.name, description = t.description, parameters = t.parameters } }
      end
      body.tool_choice = req.tool_choice or 'auto'
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
      -- Kimi puts the stream's usage in the last choice.
      if choice.usage then parts[#parts + 1] = { type = 'usage', usage = usage_in(choice.usage) } end
      if choice.finish_reason then
        parts[#parts + 1] = { type = 'finish', reason = FINISH[choice.finish_reason] or 'other', model = chunk.model }
      end
    end
    if chunk.usage then parts[#parts + 1] = { type = 'usage', usage = usage_in(chunk.usage) } end
    return parts
  end,
}
