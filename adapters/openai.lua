-- OpenAI Chat Completions (POST {base}/chat/completions), the shape of
-- https://platform.openai.com/docs/api-reference/chat. The mapping itself is the shared
-- openai_compat library (adapters/lib/openai_compat.lua); OpenAI's specifics are here:
--  * an empty API key sends no authorization header (local OpenAI-compatible servers);
--  * the legacy finish_reason "function_call" means tool calls (in openai_compat.FINISH);
--  * an assistant message with tool calls and no text sends content = null;
--  * usage in the last stream chunk with stream_options.include_usage;
--  * cached prompt tokens in prompt_tokens_details.cached_tokens, or DeepSeek's older spelling
--    prompt_cache_hit_tokens for OpenAI-compatible servers that only send that.
-- Any OpenAI-compatible server works with it.

local compat = openai_compat

local OPTS = {
  include_usage = true,
  null_tool_call_content = true,
  cache_read_tokens = function(u) return compat.cached_tokens(u) or u.prompt_cache_hit_tokens end,
}

return compat.adapter({
  name = 'openai',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://api.openai.com/v1',

  headers = function(api_key)
    if api_key == nil or api_key == '' then return {} end
    return { authorization = 'Bearer ' .. api_key }
  end,
}, OPTS)
