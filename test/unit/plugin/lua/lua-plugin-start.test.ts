import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { tempDir } from '../../fixtures/support.js';
import { type LuaPluginOptions, luaPlugin, rejection } from './fixtures/lua-plugin-setup.js';

async function startFailure(
  t: Test,
  options: LuaPluginOptions,
  code: string,
  message: RegExp,
  extra?: (setup: ReturnType<typeof luaPlugin>) => void,
) {
  const setup = luaPlugin(t, options);
  extra?.(setup);
  const error = await rejection(setup.plugin.start(new AbortController().signal));
  t.ok(error instanceof HomeAgentError, `a HomeAgentError (got ${error.message})`);
  t.equal((error as HomeAgentError).code, code);
  t.match(error.message, message);
  t.equal((await setup.health()).ok, false, 'nothing is left running');
  t.same(
    setup.test.tools.list().filter((tool) => tool.owner === `plugin:${setup.runtime.manifest.name}`),
    [],
    'no tool of the plugin stays registered',
  );
  t.same(setup.reported, [], 'a failed start is the host’s to report, not a state change');
  return setup;
}

const ONE_TOOL = `ha.register_tool{ name = 'demo_ok', description = 'fine', tier = 'read', handler = function() return 1 end }`;

t.test('main.lua that is missing, too large or outside the folder is refused before any Lua runs', async (t) => {
  await startFailure(t, {}, 'HA_ERR_PLUGIN_LOAD', /main\.lua in .*: the file does not exist/);

  await startFailure(t, { source: `-- ${'x'.repeat(1024 * 1024)}` }, 'HA_ERR_PLUGIN_LOAD', /larger than 1048576 bytes/);

  const outside = tempDir(t);
  writeFileSync(join(outside, 'evil.lua'), `return { start = function(ha) ${ONE_TOOL} end }`);
  await startFailure(t, {}, 'HA_ERR_PLUGIN_LOAD', /a link that leads outside the plugin folder/, ({ dir }) =>
    symlinkSync(join(outside, 'evil.lua'), join(dir, 'main.lua')),
  );
});

t.test('a syntax error, a failing top level or a missing start() is a clear load failure', async (t) => {
  await startFailure(t, { source: 'local x = = 1\n' }, 'HA_ERR_PLUGIN_LOAD', /syntax error: demo\/main\.lua:1: unexpected symbol near '='/);
  await startFailure(
    t,
    { source: 'error("no config file")' },
    'HA_ERR_PLUGIN_LOAD',
    /main\.lua failed to load: demo\/main\.lua:1: no config file/,
  );
  await startFailure(t, { source: 'return { stop = function() end }' }, 'HA_ERR_PLUGIN_LOAD', /main\.lua defines no start function/);
});

t.test('a runaway start() or top level is stopped by the time limit and start fails', async (t) => {
  await startFailure(
    t,
    { source: `return { start = function(ha) ${ONE_TOOL} while true do end end }` },
    'HA_ERR_PLUGIN_START',
    /start\(\) failed: the script ran longer than its time limit of 200 ms/,
  );
  await startFailure(t, { source: 'local t = {} while true do t[#t + 1] = {} end' }, 'HA_ERR_PLUGIN_LOAD', /out of memory|time limit/);
});

t.test('a tool the host refuses, or a bad definition, fails start()', async (t) => {
  const live = new Set<string>();
  await startFailure(
    t,
    {
      source: `return { start = function(ha) ${ONE_TOOL} ha.register_tool{ name = 'other_tool', description = 'd', tier = 'read', handler = print } end }`,
      register: (definition) => {
        if (!definition.name.startsWith('demo_'))
          throw new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `may not register ${definition.name}`);
        live.add(definition.name);
        return () => void live.delete(definition.name);
      },
    },
    'HA_ERR_PLUGIN_PERMISSION',
    /Lua plugin demo: may not register other_tool/,
  );
  t.same([...live], [], 'the tool registered before the refusal was removed again');

  await startFailure(
    t,
    { source: `return { start = function(ha) ${ONE_TOOL} end }` },
    'HA_ERR_TOOL_DEFINITION',
    /demo_ok is already registered/,
    ({ test }) =>
      test.tools.register({
        name: 'demo_ok',
        description: 'taken',
        parameters: { type: 'object' },
        owner: 'core',
        tier: 'read',
        execute: () => 0,
      }),
  );

  await startFailure(
    t,
    { source: `return { start = function(ha) ha.register_tool{ name = 'demo_x', description = 'd', handler = print } end }` },
    'HA_ERR_PLUGIN_START',
    /demo\/main\.lua:1: ha\.register_tool demo_x: tier must be "read", "act" or "dangerous", not nil/,
  );
});
