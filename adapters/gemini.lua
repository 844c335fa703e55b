-- Google Gemini API (generativelanguage.googleapis.com, v1beta), the shape of
-- https://ai.google.dev/api/generate-content :
--  * POST /v1beta/models/{model}:generateContent, streaming POST
--    /v1beta/models/{model}:streamGenerateContent?alt=sse (SSE, each event a whole
--    GenerateContentResponse holding the next piece);
--  * contents = {{role = 'user' | 'model', parts = {{text}, {functionCall}, {functionResponse}}}};
--    the system prompt goes to systemInstruction; tool results are functionResponse parts in a
--    user turn, matched to the call by name (and id when the call had one);
--  * tools = {{functionDeclarations = {{name, description, parameters}}}} where parameters is
--    the OpenAPI subset of JSON Schema; toolConfig.functionCallingConfig.mode AUTO or NONE;
--  * function calls arrive whole ({name, args (an object)}), usually without ids;
--  * usageMetadata {promptTokenCount, candidatesTokenCount, thoughtsTokenCount,
--    cachedContentTokenCount, totalTokenCount}; parts with thought = true are reasoning;
--  * the key goes in the x-goog-api-key header (not in the URL, where logs would keep it).

local FINISH = {
  STOP = 'stop',
  MAX_TOKENS = 'length',
  SAFETY = 'content_filter',
  RECITATION = 'content_filter',
  BLOCKLIST = 'content_filter',
  PROHIBITED_CONTENT = 'content_filter',
  SPII = 'content_filter',
  IMAGE_SAFETY = 'content_filter',
  MALFORMED_FUNCTION_CALL = 'error',
}

-- JSON Schema keywords the OpenAPI subset refuses ("Unknown name ...": HTTP 400).
local UNSUPPORTED = { ['$schema'] = true, ['$id'] = true, additionalProperties = true, ['$ref'] = true, ['$defs'] = true }

local function clean_schema(schema)
  if type(schema) ~= 'table' then return schema end
  local out = {}
  for k, v in pairs(schema) do
    if not UNSUPPORTED[k] then out[k] = clean_schema(v) end
  end
  -- Keep lists (enum, required) lists even when empty.
  if schema[1] ~= nil or getmetatable(schema) == 'json.array' then out = json.array(out) end
  return out
end

local function convert_messages(messages)
  local system = {}
  local contents = json.array()
  local function append(role, parts)
    local last = contents[#contents]
    if last and last.role == role then
      for _, p in ipairs(parts) do last.parts[#last.parts + 1] = p end
    else
      contents[#contents + 1] = { role = role, parts = parts }
    end
  end
  for _, m in ipairs(messages) do
    if m.role == 'system' then
      system[#system + 1] = m.content
    elseif m.role == 'user' then
      append('user', json.array({ { text = m.content } }))
    elseif m.role == 'assistant' then
      local parts = json.array()
      if m.content ~= nil and m.content ~= '' then parts[#parts + 1] = { text = m.content } end
      for _, c in ipairs(m.tool_calls or {}) do
        local args = json.decode(c.arguments ~= '' and c.arguments or '{}')
        if type(args) ~= 'table' then args = {} end
        local call = { name = c.name, args = args }
        -- Ids we made up ourselves (call_<n>) mean Gemini sent none.
        if c.id and c.id ~= '' and not c.id:match('^call_%d+$') then call.id = c.id end
        parts[#parts + 1] = { functionCall = call }
      end
      if #parts > 0 then append('model', parts) end
    elseif m.role == 'tool' then
      local response = { name = m.name, response = { content = m.content } }
      if m.tool_call_id and m.tool_call_id ~= '' and not m.tool_call_id:match('^call_%d+$') then response.id = m.tool_call_id end
      append('user', json.array({ { functionResponse = response } }))
    end
  end
  return table.concat(system, '\n\n'), contents
end

local function usage_in(u)
  if not u then return nil end
  local prompt = u.promptTokenCount or 0
  local thoughts = u.thoughtsTokenCount or 0
  local completion = (u.candidatesTokenCount or 0) + thoughts
  return {
    prompt_tokens = prompt,
    completion_tokens = completion,
    total_tokens = u.totalTokenCount or (prompt + completion),
    cache_read_tokens = u.cachedContentTokenCount or 0,
    reasoning_tokens = thoughts,
  }
end

-- The pieces of one candidate: text, thoughts and function calls, in order.
local function read_parts(candidate)
  local text, thoughts, calls = {}, {}, {}
  local content = candidate and candidate.content or {}
  for _, p in ipairs(content.parts or {}) do
    if p.functionCall then
      calls[#calls + 1] = { id = p.functionCall.id, name = p.functionCall.name, arguments = p.functionCall.args or {} }
    elseif p.text then
      if p.thought then thoughts[#thoughts + 1] = p.text else text[#text + 1] = p.text end
    end
  end
  return table.concat(text), table.concat(thoughts), calls
end

local function finish_of(candidate, has_calls)
  local reason = FINISH[candidate.finishReason] or 'other'
  -- Gemini says STOP after function calls too.
  if reason == 'stop' and has_calls then reason = 'tool_calls' end
  return reason
end

return {
  name = 'gemini',
  version = '1.0.0',
  endpoint = '/v1beta/models/{model}:generateContent',
  stream_endpoint = '/v1beta/models/{model}:streamGenerateContent?alt=sse',
  default_base_url = 'https://generativelanguage.googleapis.com',
  stream_format = 'sse',

  headers = function(api_key)
    return { ['x-goog-api-key'] = api_key or '' }
  end,

  transform_request = function(req)
    local system, contents = convert_messages(req.messages)
    local body = { contents = contents }
    if system ~= '' then body.systemInstruction = { parts = json.array({ { text = system } }) } end
    local config = {}
    if req.temperature then config.temperature = req.temperature end
    if req.max_tokens then config.maxOutputTokens = req.max_tokens end
    if next(config) then body.generationConfig = config end
    if req.tools and #req.tools > 0 then
      local declarations = json.array()
      for i, t in ipairs(req.tools) do
        declarations[i] = { name = t.name, description = t.description, parameters = clean_schema(t.parameters) }
      end
      body.tools = json.array({ { functionDeclarations = declarations } })
      body.toolConfig = { functionCallingConfig = { mode = req.tool_choice == 'none' and 'NONE' or 'AUTO' } }
    end
    return body
  end,

  transform_response = function(body)
    if body.error then
      return { error = { message = (body.error.status or 'error') .. ': ' .. (body.error.message or '') } }
    end
    local candidate = body.candidates and body.candidates[1]
    if not candidate then
      -- The prompt itself was blocked.
      local blocked = body.promptFeedback and body.promptFeedback.blockReason
      if blocked then return { text = '', finish_reason = 'content_filter', usage = usage_in(body.usageMetadata), model = body.modelVersion } end
      return nil, 'the answer has no candidates'
    end
    local text, thoughts, calls = read_parts(candidate)
    return {
      text = text,
      reasoning = thoughts,
      tool_calls = calls,
      usage = usage_in(body.usageMetadata),
      finish_reason = finish_of(candidate, #calls > 0),
      model = body.modelVersion,
    }
  end,

  -- Each event is a whole response object with the next piece; function calls come complete,
  -- so they become tool-call parts numbered by ctx.calls.
  transform_stream_chunk = function(chunk, ctx)
    if type(chunk) ~= 'table' then return nil end
    if chunk.error then
      return { { type = 'error', message = (chunk.error.status or 'error') .. ': ' .. (chunk.error.message or '') } }
    end
    local parts = {}
    local candidate = chunk.candidates and chunk.candidates[1]
    if candidate then
      local text, thoughts, calls = read_parts(candidate)
      if thoughts ~= '' then parts[#parts + 1] = { type = 'reasoning-delta', delta = thoughts } end
      if text ~= '' then parts[#parts + 1] = { type = 'text-delta', delta = text } end
      for _, c in ipairs(calls) do
        local index = ctx.calls or 0
        ctx.calls = index + 1
        parts[#parts + 1] = { type = 'tool-call', index = index, call = c }
      end
    end
    if chunk.usageMetadata then parts[#parts + 1] = { type = 'usage', usage = usage_in(chunk.usageMetadata) } end
    if candidate and candidate.finishReason then
      parts[#parts + 1] = { type = 'finish', reason = finish_of(candidate, (ctx.calls or 0) > 0), model = chunk.modelVersion }
    end
    return parts
  end,
}
