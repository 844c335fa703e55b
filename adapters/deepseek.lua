-- DeepSeek chat completions (POST https://api.deepseek.com/chat/completions), the shape of
-- https://api-docs.deepseek.com/api/create-chat-completion : OpenAI's format (the shared
-- openai_compat library, adapters/lib/openai_compat.lua) plus
--  * reasoning_content (deepseek-reasoner's thinking) in the message and in stream deltas; it must
--    not be sent back in later requests (the API answers 400 when an assistant message has it),
--    and openai_compat never sends it;
--  * usage.prompt_cache_hit_tokens / prompt_cache_miss_tokens (context caching on disk), with
--    prompt_tokens_details.cached_tokens in newer answers;
--  * finish_reason "insufficient_system_resource" (the server gave up), an error;
--  * SSE streams interleaved with ": keep-alive" comments while the server is busy (the host
--    skips SSE comments).

local compat = openai_compat

local OPTS = {
  default_model = 'deepseek-chat',
  include_usage = true,
  finish = {
    stop = 'stop',
    length = 'length',
    tool_calls = 'tool_calls',
    content_filter = 'content_filter',
    insufficient_system_resource = 'error',
  },
  cache_read_tokens = function(u)
    local cached = u.prompt_cache_hit_tokens
    if cached == nil then cached = compat.cached_tokens(u) end
    return cached
  end,
  error_message = function(e) return e.message or json.encode(e) end,
}

return compat.adapter({
  name = 'deepseek',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://api.deepseek.com',
  headers = compat.bearer,
}, OPTS)
