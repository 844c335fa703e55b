-- Ollama chat (POST {base}/api/chat), the shape of
-- https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion :
--  * messages {role, content, tool_calls = {{function = {name, arguments (an object)}}}},
--    tool results as {role = 'tool', content, tool_name};
--  * tools in OpenAI's {type = 'function', function = {...}} form; sampling settings under
--    `options` (temperature, num_predict);
--  * the answer is one object {model, message, done, done_reason, prompt_eval_count, eval_count};
--    streaming is NDJSON: one such object per line, the last with done = true and the counts;
--  * tool calls come whole in one line (newer versions add id and function.index); a thinking
--    model's reasoning is message.thinking.

local FINISH = { stop = 'stop', length = 'length', load = 'other', unload = 'other' }

local function messages_out(messages)
  local out = json.array()
  for _, m in ipairs(messages) do
    if m.role == 'assistant' then
      local msg = { role = 'assistant', content = m.content }
      if m.tool_calls and #m.tool_calls > 0 then
        msg.tool_calls = json.array()
        for i, c in ipairs(m.tool_calls) do
          local args = json.decode(c.arguments ~= '' and c.arguments or '{}')
          if type(args) ~= 'table' then args = {} end
          msg.tool_calls[i] = { ['function'] = { name = c.name, arguments = args } }
        end
      end
      out[#out + 1] = msg
    elseif m.role == 'tool' then
      out[#out + 1] = { role = 'tool', content = m.content, tool_name = m.name }
    else
      out[#out + 1] = { role = m.role, content = m.content }
    end
  end
  return out
end

local function usage_in(body)
  if body.prompt_eval_count == nil and body.eval_count == nil then return nil end
  return { prompt_tokens = body.prompt_eval_count or 0, completion_tokens = body.eval_count or 0 }
end

local function calls_in(message, first_index)
  local calls = {}
  for i, c in ipairs(message.tool_calls or {}) do
    local f = c['function'] or {}
    calls[#calls + 1] = { index = f.index or (first_index + i - 1), call = { id = c.id, name = f.name, arguments = f.arguments or {} } }
  end
  return calls
end

return {
  name = 'ollama',
  version = '1.0.0',
  endpoint = '/api/chat',
  default_base_url = 'http://127.0.0.1:11434',
  stream_format = 'ndjson',

  -- Ollama itself needs no key; one set here is for a proxy in front of it.
  headers = function(api_key)
    if api_key == nil or api_key == '' then return {} end
    return { authorization = 'Bearer ' .. api_key }
  end,

  transform_request = function(req)
    local body = { model = req.model, messages = messages_out(req.messages), stream = req.stream }
    local options = {}
    if req.temperature then options.temperature = req.temperature end
    if req.max_tokens then options.num_predict = req.max_tokens end
    if next(options) then body.options = options end
    -- Ollama has no tool_choice: "none" means offering no tools.
    if req.tools and #req.tools > 0 and req.tool_choice ~= 'none' then
      body.tools = json.array()
      for i, t in ipairs(req.tools) do
        body.tools[i] = { type = 'function', ['function'] = { name = t.name, description = t.description, parameters = t.parameters } }
      end
    end
    return body
  end,

  transform_response = function(body)
    if body.error then return { error = { message = tostring(body.error) } } end
    local message = body.message or {}
    local calls = {}
    for i, c in ipairs(calls_in(message, 0)) do calls[i] = c.call end
    return {
      text = message.content or '',
      reasoning = message.thinking or '',
      tool_calls = calls,
      usage = usage_in(body),
      finish_reason = #calls > 0 and 'tool_calls' or (FINISH[body.done_reason] or 'stop'),
      model = body.model,
    }
  end,

  transform_stream_chunk = function(line, ctx)
    if type(line) ~= 'table' then return nil end
    if line.error then return { { type = 'error', message = tostring(line.error) } } end
    local parts = {}
    local message = line.message or {}
    if message.thinking and message.thinking ~= '' then parts[#parts + 1] = { type = 'reasoning-delta', delta = message.thinking } end
    if message.content and message.content ~= '' then parts[#parts + 1] = { type = 'text-delta', delta = message.content } end
    for _, c in ipairs(calls_in(message, ctx.calls or 0)) do
      ctx.calls = math.max(ctx.calls or 0, c.index + 1)
      parts[#parts + 1] = { type = 'tool-call', index = c.index, call = c.call }
    end
    if line.done then
      local usage = usage_in(line)
      if usage then parts[#parts + 1] = { type = 'usage', usage = usage } end
      local reason = FINISH[line.done_reason] or 'stop'
      if (ctx.calls or 0) > 0 and reason == 'stop' then reason = 'tool_calls' end
      parts[#parts + 1] = { type = 'finish', reason = reason, model = line.model }
    end
    return parts
  end,
}
