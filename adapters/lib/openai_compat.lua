-- openai_compat: the OpenAI Chat Completions mapping shared by the OpenAI-format adapters
-- (openai, deepseek, qwen, zhipu, moonshot). The host loads it before an adapter script that
-- mentions `openai_compat` and exposes the returned table as that read-only global.
--
-- Wire shape (https://platform.openai.com/docs/api-reference/chat): messages with role/content,
-- assistant tool_calls {id, type='function', function={name, arguments (JSON text)}}, tool
-- messages with tool_call_id; streaming as SSE chat.completion.chunk objects whose
-- delta.tool_calls carry a stream index; reasoning_content (DeepSeek and followers) in messages
-- and deltas; usage in the last chunk when stream_options.include_usage is set.
--
-- Every function takes an `opts` table (keep one per adapter, built once) with optional fields:
--   default_model          model used when the request has none (else req.model as it is)
--   include_usage          streamed requests ask for usage (stream_options.include_usage)
--   null_tool_call_content an assistant message with tool calls and no text sends content = null
--   tool_message_name      tool messages carry the function name next to tool_call_id
--   finish                 vendor finish_reason -> unified reason (default M.FINISH); others: 'other'
--   cache_read_tokens      function(u): cached prompt tokens (default M.cached_tokens)
--   reasoning_tokens       function(u): reasoning tokens (default M.reasoning_tokens)
--   error_message          function(e): the message of a vendor error object (default M.error_message)
--   on_choice              function(choice, parts, chunk, ctx): extra stream parts for a choice,
--                          appended after its finish part

local M = {}

M.FINISH = {
  stop = 'stop',
  length = 'length',
  tool_calls = 'tool_calls',
  function_call = 'tool_calls',
  content_filter = 'content_filter',
}
local DEFAULT_FINISH = M.FINISH

--- prompt_tokens_details.cached_tokens (OpenAI's place for cached prompt tokens).
function M.cached_tokens(u)
  local details = u.prompt_tokens_details
  return details and details.cached_tokens
end

--- completion_tokens_details.reasoning_tokens.
function M.reasoning_tokens(u)
  local details = u.completion_tokens_details
  return details and details.reasoning_tokens
end

--- The unified usage of a vendor usage object (nil stays nil).
function M.usage(u, opts)
  if not u then return nil end
  return {
    prompt_tokens = u.prompt_tokens,
    completion_tokens = u.completion_tokens,
    total_tokens = u.total_tokens,
    cache_read_tokens = (opts.cache_read_tokens or M.cached_tokens)(u),
    reasoning_tokens = (opts.reasoning_tokens or M.reasoning_tokens)(u),
  }
end

--- The message of an error object (a table {message, ...}, or anything else as text).
function M.error_message(e)
  if type(e) == 'table' then return e.message or json.encode(e) end
  return tostring(e)
end

local function error_message(e, opts)
  return (opts.error_message or M.error_message)(e)
end

local function finish_reason(reason, opts)
  return (opts.finish or DEFAULT_FINISH)[reason] or 'other'
end

--- The unified messages as OpenAI messages (a JSON array).
function M.messages(messages, opts)
  local out = json.array()
  for _, m in ipairs(messages) do
    if m.role == 'assistant' then
      local msg = { role = 'assistant', content = m.content }
      if m.tool_calls and #m.tool_calls > 0 then
        msg.tool_calls = json.array()
        for i, c in ipairs(m.tool_calls) do
          msg.tool_calls[i] = { id = c.id, type = 'function', ['function'] = { name = c.name, arguments = c.arguments } }
        end
        if opts.null_tool_call_content and msg.content == '' then msg.content = json.null end
      end
      out[#out + 1] = msg
    elseif m.role == 'tool' then
      local name = nil
      if opts.tool_message_name then name = m.name end
      out[#out + 1] = { role = 'tool', tool_call_id = m.tool_call_id, name = name, content = m.content }
    else
      out[#out + 1] = { role = m.role, content = m.content }
    end
  end
  return out
end

--- The unified tools as OpenAI function tools (a JSON array).
function M.tools(tools)
  local out = json.array()
  for i, t in ipairs(tools) do
    out[i] = { type = 'function', ['function'] = { name = t.name, description = t.description, parameters = t.parameters } }
  end
  return out
end

--- The request body for a unified request. Vendors adjust the returned table afterwards.
function M.request(req, opts)
  local model = req.model
  if opts.default_model and model == '' then model = opts.default_model end
  local body = {
    model = model,
    messages = M.messages(req.messages, opts),
    temperature = req.temperature,
    max_tokens = req.max_tokens,
    stream = req.stream,
  }
  if req.tools and #req.tools > 0 then
    body.tools = M.tools(req.tools)
    body.tool_choice = req.tool_choice or 'auto'
  end
  if req.stream and opts.include_usage then body.stream_options = { include_usage = true } end
  return body
end

--- The unified result for a decoded answer (or {error}, or nil and why).
function M.response(body, opts)
  if body.error then return { error = { message = error_message(body.error, opts) } } end
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
    usage = M.usage(body.usage, opts),
    finish_reason = finish_reason(choice.finish_reason, opts),
    model = body.model,
  }
end

--- The stream parts for one chat.completion.chunk. ctx is the stream's own table (passed to
--- opts.on_choice); nothing is kept in globals.
function M.stream_chunk(chunk, ctx, opts)
  if type(chunk) ~= 'table' then return nil end
  if chunk.error then return { { type = 'error', message = error_message(chunk.error, opts) } } end
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
      -- Some servers (DashScope) repeat id and name as "" in continuation fragments: only the
      -- index says which call. "" is the same as absent.
      parts[#parts + 1] = {
        type = 'tool-call-delta',
        index = c.index or 0,
        id = (c.id ~= '' and c.id) or nil,
        name = (f.name ~= '' and f.name) or nil,
        arguments_delta = f.arguments or '',
      }
    end
    if choice.finish_reason then
      parts[#parts + 1] = { type = 'finish', reason = finish_reason(choice.finish_reason, opts), model = chunk.model }
    end
    if opts.on_choice then opts.on_choice(choice, parts, chunk, ctx) end
  end
  if chunk.usage then parts[#parts + 1] = { type = 'usage', usage = M.usage(chunk.usage, opts) } end
  return parts
end

--- Headers with a bearer token (an absent key sends "Bearer ").
function M.bearer(api_key)
  return { authorization = 'Bearer ' .. (api_key or '') }
end

--- An adapter table: `spec` (name, endpoint, headers, ...) with the transform functions it does
--- not define taken from this library, bound to `opts`.
function M.adapter(spec, opts)
  local adapter = { stream_format = 'sse' }
  for k, v in pairs(spec) do adapter[k] = v end
  if adapter.transform_request == nil then
    adapter.transform_request = function(req) return M.request(req, opts) end
  end
  if adapter.transform_response == nil then
    adapter.transform_response = function(body) return M.response(body, opts) end
  end
  if adapter.transform_stream_chunk == nil then
    adapter.transform_stream_chunk = function(chunk, ctx) return M.stream_chunk(chunk, ctx, opts) end
  end
  return adapter
end

return M
