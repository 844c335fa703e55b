-- Zhipu AI GLM (BigModel open platform, POST https://open.bigmodel.cn/api/paas/v4/chat/completions),
-- the shape of https://docs.bigmodel.cn/api-reference/模型-api/对话补全 : OpenAI-like (the shared
-- openai_compat library, adapters/lib/openai_compat.lua) with
--  * temperature in [0, 1] (older GLM-4 models refuse exactly 0, so it is kept just above);
--  * tool_choice only "auto": "none" is expressed by offering no tools;
--  * reasoning_content from the thinking models (GLM-4.5 and later);
--  * streamed tool calls arrive whole in one chunk (id, index, name and all arguments);
--  * the last stream chunk carries finish_reason and usage together (no stream_options); answers
--    have request_id; usage has no reasoning token count;
--  * finish reasons "sensitive" (content filter) and "network_error";
--  * errors {error = {code (a string such as "1113"), message (often Chinese)}}.

local compat = openai_compat

local OPTS = {
  default_model = 'glm-4-flash',
  finish = {
    stop = 'stop',
    length = 'length',
    tool_calls = 'tool_calls',
    sensitive = 'content_filter',
    network_error = 'error',
  },
  reasoning_tokens = function() return nil end,
  error_message = function(e) return (e.code and (tostring(e.code) .. ': ') or '') .. (e.message or json.encode(e)) end,
}

return compat.adapter({
  name = 'zhipu',
  version = '1.0.0',
  endpoint = '/chat/completions',
  default_base_url = 'https://open.bigmodel.cn/api/paas/v4',
  headers = compat.bearer,

  transform_request = function(req)
    local body = compat.request(req, OPTS)
    if req.temperature then body.temperature = math.max(0.01, math.min(req.temperature, 1)) end
    if body.tools then
      if req.tool_choice == 'none' then
        body.tools, body.tool_choice = nil, nil
      else
        body.tool_choice = 'auto'
      end
    end
    return body
  end,
}, OPTS)
