/**
 * The Lua side of a Lua plugin: a chunk loaded into the plugin's sandbox before its main.lua.
 * It returns the entry points the plugin's runtime (lua-plugin.ts) calls (boot, start, call,
 * stop) and builds the `ha` API the script sees (docs/lua-plugins.md). Everything it relies on is
 * captured in locals when it loads, so a script that replaces globals (`pcall`, `json`, `log`)
 * only breaks itself, and the tool table is an upvalue no script can reach (the sandbox has no
 * `debug`).
 *
 * Results cross back as the first two return values: `call` answers `(result, nil)` on success
 * and `(nil, failure)` when the handler reported a failure the model should read
 * (`ha.fail{...}` or `return nil, "message"`). Any other Lua error is re-raised unchanged, so the
 * sandbox still classifies time, memory and size limits.
 */
export const LUA_PLUGIN_RUNTIME_CHUNK = '=homeagent-plugin-runtime';

export const LUA_PLUGIN_RUNTIME = `
local type, pairs, pcall, error, tostring, select = type, pairs, pcall, error, tostring, select
local rawget, setmetatable, load_text = rawget, setmetatable, load
local string_format, string_sub = string.format, string.sub
local json_array, host_log, G = json.array, log, _G

local TIERS = { read = true, act = true, dangerous = true }
local FIELDS = {
  name = true, description = true, parameters = true, tier = true, handler = true,
  parallel_safe = true, no_memory = true, timeout_ms = true,
}
local REASONS = {
  required = true, type = true, enum = true, format = true, range = true, unauthorized = true,
  timeout = true, not_found = true, rejected = true, capability = true, unavailable = true, failed = true,
}

local plugin, ha
local handlers, specs = {}, {}
local registering = false
-- Errors raised by ha.fail, recognised by identity (weak keys: they are garbage like any error).
local failures = setmetatable({}, { __mode = 'k' })

local function register_tool(def)
  if not registering then error('ha.register_tool can only be called while start() runs', 2) end
  if type(def) ~= 'table' then error('ha.register_tool expects a table', 2) end
  for key in pairs(def) do
    if not FIELDS[key] then error('ha.register_tool: unknown field ' .. tostring(key), 2) end
  end
  local name = def.name
  if type(name) ~= 'string' or name == '' then error('ha.register_tool: name must be a non-empty string', 2) end
  if handlers[name] ~= nil then error('ha.register_tool: a tool named ' .. name .. ' is already registered', 2) end
  if type(def.handler) ~= 'function' then error('ha.register_tool ' .. name .. ': handler must be a function', 2) end
  if type(def.description) ~= 'string' or def.description == '' then
    error('ha.register_tool ' .. name .. ': description must be a non-empty string', 2)
  end
  if not TIERS[def.tier] then
    error('ha.register_tool ' .. name .. ': tier must be "read", "act" or "dangerous", not ' .. tostring(def.tier), 2)
  end
  if def.parameters ~= nil and type(def.parameters) ~= 'table' then
    error('ha.register_tool ' .. name .. ': parameters must be a table (a JSON schema)', 2)
  end
  handlers[name] = def.handler
  specs[#specs + 1] = {
    name = name,
    description = def.description,
    parameters = def.parameters,
    tier = def.tier,
    parallel_safe = def.parallel_safe,
    no_memory = def.no_memory,
    timeout_ms = def.timeout_ms,
  }
end

local function fail(info, hint)
  if type(info) == 'string' then info = { detail = info, hint = hint } end
  if type(info) ~= 'table' then error('ha.fail expects a message or a table', 2) end
  local reason = info.reason
  if reason == nil then reason = 'failed' end
  if not REASONS[reason] then error('ha.fail: unknown reason ' .. tostring(reason), 2) end
  local detail = info.detail
  if type(detail) ~= 'string' or detail == '' then error('ha.fail: detail must be a non-empty string', 2) end
  local failure = {
    reason = reason,
    detail = detail,
    field = type(info.field) == 'string' and info.field or nil,
    hint = type(info.hint) == 'string' and info.hint or nil,
  }
  failures[failure] = true
  error(failure, 0)
end

local R = {}

-- Runs main.lua's top level and finds its start/stop. A syntax error is an answer, not a raise,
-- so the host can tell "could not load" from "failed while running".
function R.boot(source, chunk_name, info)
  local chunk, problem = load_text(source, chunk_name, 't')
  if chunk == nil then return false, problem end
  ha = {
    name = info.name,
    settings = info.settings or {},
    network = info.network,
    log = function(level, message)
      if message == nil then level, message = 'info', level end
      return host_log(level, message)
    end,
    register_tool = register_tool,
    fail = fail,
  }
  G.ha = ha
  local returned = chunk()
  if type(returned) == 'table' then
    plugin = returned
  elseif type(rawget(G, 'plugin')) == 'table' then
    plugin = rawget(G, 'plugin')
  else
    plugin = { start = rawget(G, 'start'), stop = rawget(G, 'stop') }
  end
  if type(plugin.start) ~= 'function' then
    error(string_sub(chunk_name, 2) .. ' defines no start function: return a table with start(ha), or define a global plugin table or a global start function', 0)
  end
  if plugin.stop ~= nil and type(plugin.stop) ~= 'function' then error(string_sub(chunk_name, 2) .. ': stop must be a function', 0) end
  return true
end

-- Calls start(ha); the tools it registered are the answer.
function R.start()
  registering = true
  plugin.start(ha)
  registering = false
  local out = {}
  for i = 1, #specs do out[i] = specs[i] end
  return json_array(out)
end

function R.call(name, args, call)
  local handler = handlers[name]
  if handler == nil then return nil, { reason = 'not_found', detail = 'the plugin has no tool named ' .. tostring(name) } end
  local ok, result, message = pcall(handler, args, call)
  if ok then
    if result == nil and message ~= nil then return nil, { reason = 'failed', detail = tostring(message) } end
    return result, nil
  end
  if type(result) == 'table' and failures[result] then return nil, result end
  if type(result) ~= 'string' then result = string_format('(error object is a %s value) %s', type(result), tostring(result)) end
  error(result, 0)
end

function R.stop()
  if plugin ~= nil and plugin.stop ~= nil then plugin.stop(ha) end
  return true
end

return R
`;
