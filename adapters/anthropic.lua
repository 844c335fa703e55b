-- Anthropic Messages API (POST {base}/v1/messages), the shape of
-- https://docs.anthropic.com/en/api/messages and .../messages-streaming :
--  * the system prompt is a top-level `system` string, not a message;
--  * messages alternate user/assistant; content is a list of blocks: text, tool_use
--    {id, name, input (an object)} from the assistant, tool_result {tool_use_id, content} sent
--    back inside a *user* message (several results of one turn share that message);
--  * tools are {name, description, input_schema}; max_tokens is required;
--  * answers carry content blocks (text, thinking, tool_use), stop_reason and usage
--    {input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens};
--  * streams are SSE events message_start, content_block_start, content_block_delta
--    (text_delta, thinking_delta, input_json_delta), content_block_stop, message_delta
--    (stop_reason and output usage), message_stop, ping and error;
--  * auth by x-api-key plus an anthropic-version header.

local API_VERSION = '2023-06-01'
local DEFAULT_MAX_TOKENS = 4096

local STOP = {
  end_turn = 'stop',
  stop_sequence = 'stop',
  max_tokens = 'length',
  tool_use = 'tool_calls',
  refusal = 'content_filter',
  pause_turn = 'other',
}

-- Error types Anthropic sends in `error` events and bodies, as LlmError kinds.
local ERROR_KIND = {
  overloaded_error = 'server',
  api_error = 'server',
  rate_limit_error = 'rate_limit',
  authentication_error = 'auth',
  permission_error = 'auth',
  invalid_request_error = 'bad_request',
  request_too_large = 'bad_request',
  not_found_error = 'bad_request',
}

local function text_block(text)
  return { type = 'text', text = text }
end

-- Appends content blocks to the conversation, merging with the previous message of the same
-- role (Anthropic requires strictly alternating roles).
local function append(out, role, blocks)
  local last = out[#out]
  if last and last.role == role then
    for _, b in ipairs(blocks) do last.content[#last.content + 1] = b end
  else
    out[#out + 1] = { role = role, content = blocks }
  end
end

local function convert_messages(messages)
  local system = {}
  local out = json.array()
  for _, m in ipairs(messages) do
    if m.role == 'system' then
      system[#system + 1] = m.content
    elseif m.role == 'user' then
      -- Empty text blocks are refused by the API.
      if m.content ~= '' then append(out, 'user', json.array({ text_block(m.content) })) end
    elseif m.role == 'assistant' then
      local blocks = json.array()
      if m.content ~= nil and m.content ~= '' then blocks[#blocks + 1] = text_block(m.content) end
      for _, c in ipairs(m.tool_calls or {}) do
        local input = json.decode(c.arguments ~= '' and c.arguments or '{}')
        if type(input) ~= 'table' then input = {} end
        blocks[#blocks + 1] = { type = 'tool_use', id = c.id, name = c.name, input = input }
      end
      if #blocks > 0 then append(out, 'assistant', blocks) end
    elseif m.role == 'tool' then
      append(out, 'user', json.array({ { type = 'tool_result', tool_use_id = m.tool_call_id, content = m.content } }))
    end
  end
  return table.concat(system, '\n\n'), out
end

local function usage_in(u, prompt_base)
  if not u then return nil end
  local cache_read = u.cache_read_input_tokens or 0
  -- input_tokens counts only the uncached part of the prompt.
  local prompt = prompt_base or ((u.input_tokens or 0) + cache_read + (u.cache_creation_input_tokens or 0))
  local completion = u.output_tokens or 0
  return { prompt_tokens = prompt, completion_tokens = completion, total_tokens = prompt + completion, cache_read_tokens = cache_read }
end

local function error_in(e)
  e = e or {}
  return { message = (e.type or 'error') .. ': ' .. (e.message or ''), kind = ERROR_KIND[e.type] or 'server' }
end

return {
  name = 'anthropic',
  version = '1.0.0',
  endpoint = '/v1/messages',
  default_base_url = 'https://api.anthropic.com',
  stream_format = 'sse',

  headers = function(api_key)
    return { ['x-api-key'] = api_key or '', ['anthropic-version'] = API_VERSION }
  end,

  transform_request = function(req)
    local system, messages = convert_messages(req.messages)
    local body = {
      model = req.model,
      messages = messages,
      max_tokens = req.max_tokens or DEFAULT_MAX_TOKENS,
      stream = req.stream,
    }
    if system ~= '' then body.system = system end
    if req.temperature then body.temperature = math.min(req.temperature, 1) end
    if req.tools and #req.tools > 0 then
      body.tools = json.array()
      for i, t in ipairs(req.tools) do
        body.tools[i] = { name = t.name, description = t.description, input_schema = t.parameters }
      end
      body.tool_choice = { type = req.tool_choice == 'none' and 'none' or 'auto' }
    end
    return body
  end,

  transform_response = function(body)
    if body.type == 'error' then return { error = error_in(body.error) } end
    local text, reasoning, calls = {}, {}, {}
    for _, block in ipairs(body.content or {}) do
      if block.type == 'text' then
        text[#text + 1] = block.text
      elseif block.type == 'thinking' then
        reasoning[#reasoning + 1] = block.thinking
      elseif block.type == 'tool_use' then
        calls[#calls + 1] = { id = block.id, name = block.name, arguments = block.input or {} }
      end
    end
    return {
      text = table.concat(text),
      reasoning = table.concat(reasoning),
      tool_calls = calls,
      usage = usage_in(body.usage),
      finish_reason = STOP[body.stop_reason] or 'other',
      model = body.model,
    }
  end,

  -- ctx keeps the prompt usage from message_start until message_delta reports the output.
  transform_stream_chunk = function(chunk, ctx)
    if type(chunk) ~= 'table' then return nil end
    local t = chunk.type
    if t == 'message_start' then
      local msg = chunk.message or {}
      ctx.model = msg.model
      local u = usage_in(msg.usage)
      ctx.prompt = u and u.prompt_tokens or 0
      ctx.cache_read = u and u.cache_read_tokens or 0
      return nil
    elseif t == 'content_block_start' then
      local block = chunk.content_block or {}
      if block.type == 'tool_use' then
        return { { type = 'tool-call-delta', index = chunk.index, id = block.id, name = block.name, arguments_delta = '' } }
      elseif block.type == 'text' and block.text and block.text ~= '' then
        return { { type = 'text-delta', delta = block.text } }
      end
      return nil
    elseif t == 'content_block_delta' then
      local d = chunk.delta or {}
      if d.type == 'text_delta' then
        return { { type = 'text-delta', delta = d.text } }
      elseif d.type == 'thinking_delta' then
        return { { type = 'reasoning-delta', delta = d.thinking } }
      elseif d.type == 'input_json_delta' then
        return { { type = 'tool-call-delta', index = chunk.index, arguments_delta = d.partial_json or '' } }
      end
      return nil
    elseif t == 'message_delta' then
      local parts = {}
      local u = chunk.usage
      if u then
        local prompt, cache_read = ctx.prompt or 0, ctx.cache_read or 0
        if u.input_tokens then
          -- Newer streams repeat the (final) input counts here.
          local full = usage_in(u)
          prompt, cache_read = full.prompt_tokens, full.cache_read_tokens
        end
        local completion = u.output_tokens or 0
        parts[#parts + 1] = {
          type = 'usage',
          usage = { prompt_tokens = prompt, completion_tokens = completion, total_tokens = prompt + completion, cache_read_tokens = cache_read },
        }
      end
      local stop = chunk.delta and chunk.delta.stop_reason
      if stop then parts[#parts + 1] = { type = 'finish', reason = STOP[stop] or 'other', model = ctx.model } end
      return parts
    elseif t == 'error' then
      local e = error_in(chunk.error)
      return { { type = 'error', message = e.message, kind = e.kind } }
    end
    -- ping, content_block_stop, message_stop
    return nil
  end,
}
