-- Alibaba Cloud Model Studio / DashScope, OpenAI-compatible mode
-- (POST https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions; international:
-- https://dashscope-intl.aliyuncs.com/compatible-mode/v1), the shape of
-- https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope ; the mapping is
-- the shared openai_compat library (adapters/lib/openai_compat.lua), DashScope's specifics are here:
--  * OpenAI chat completions; thinking models (qwen3, qwq) stream reasoning_content;
--  * enable_thinking is a top-level field; the open qwen3 models refuse thinking in non-streamed
--    calls, so it is switched off there;
--  * streamed tool calls: the first fragment of a call has id and name, later ones repeat the
--    index with name "" and id "" and carry argument pieces; parallel calls interleave by index
--    (openai_compat treats "" as absent);
--  * usage in the last chunk (stream_options.include_usage), cached prompt tokens in
--    prompt_tokens_details.cached_tokens;
--  * errors {error = {message, type, code}} with a request_id: the message is prefixed with the code.

local compat = openai_compat

local OPTS = {
  default_model = 'qwen-plus',
  include_usage = true,
  finish = { stop = 'stop', length = 'length', tool_calls = 'tool_calls', content_filter = 'content_filter' },
  error_message = function(e) return (e.code and (e.code .. ': ') or '') .. (e.message or json.encode(e)) end,
}

return compat.adapter({
  name = 'qwen',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://dashscope.aliyuncs.com/compatible-mode/v1',
  headers = compat.bearer,

  transform_request = function(req)
    local body = compat.request(req, OPTS)
    if not req.stream and body.model:match('^qwen3') then body.enable_thinking = false end
    return body
  end,
}, OPTS)
