-- Moonshot AI Kimi (POST https://api.moonshot.cn/v1/chat/completions; international
-- https://api.moonshot.ai/v1), the shape of https://platform.moonshot.cn/docs/api/chat :
-- OpenAI chat completions (the shared openai_compat library, adapters/lib/openai_compat.lua) with
--  * temperature in [0, 1];
--  * tool messages that carry the function name next to tool_call_id;
--  * usage of a stream inside the last choice (choices[1].usage) rather than at the top level
--    (no stream_options), and cached prompt tokens as usage.cached_tokens (context caching);
--    usage has no reasoning token count;
--  * errors {error = {message, type}} (invalid_authentication_error, rate_limit_reached_error,
--    engine_overloaded_error, ...): the message is prefixed with the type.

local compat = openai_compat

local OPTS
OPTS = {
  default_model = 'kimi-k2-0905-preview',
  tool_message_name = true,
  finish = { stop = 'stop', length = 'length', tool_calls = 'tool_calls', content_filter = 'content_filter' },
  cache_read_tokens = function(u) return u.cached_tokens or compat.cached_tokens(u) end,
  reasoning_tokens = function() return nil end,
  error_message = function(e) return (e.type and (e.type .. ': ') or '') .. (e.message or json.encode(e)) end,
  -- Kimi puts the stream's usage in the last choice.
  on_choice = function(choice, parts)
    if choice.usage then parts[#parts + 1] = { type = 'usage', usage = compat.usage(choice.usage, OPTS) } end
  end,
}

return compat.adapter({
  name = 'moonshot',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://api.moonshot.cn/v1',
  headers = compat.bearer,

  transform_request = function(req)
    local body = compat.request(req, OPTS)
    if req.temperature then body.temperature = math.min(req.temperature, 1) end
    return body
  end,
}, OPTS)
