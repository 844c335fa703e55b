/**
 * The parts of the plugin context kbtree added: `ctx.control.register` (built-in plugins only,
 * staged and swapped with the generation like tools) and the read operations of `ctx.knowledge`.
 */
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { expectError, expectErrorAsync } from '../../fixtures/support.js';
import { generation, startKernel } from './kbtree-setup.js';

const EMPTY = Type.Object({}, { additionalProperties: false });
const cli = { actor: 'cli' };

function method(name: string, answer: unknown) {
  return { name, description: `answers ${String(answer)}`, params: EMPTY, handler: () => answer };
}

t.test('control methods are staged while the plugin starts and go live with commit', async (t) => {
  const kernel = await startKernel(t, { knowledge: null });
  const gen = generation(kernel, { name: 'porch-light' });
  gen.context.control.register(method('porch_light.status', 'first'));
  t.notOk(
    kernel.control.methods().some((m) => m.name === 'porch_light.status'),
    'not callable before commit',
  );
  t.same(gen.controlMethodNames(), ['porch_light.status']);
  gen.commit();
  t.equal(await kernel.control.call('porch_light.status', {}, cli), 'first');

  // A reload: the new generation's set replaces the old one's in one step.
  const next = generation(kernel, { name: 'porch-light' });
  next.context.control.register(method('porch_light.status', 'second'));
  t.equal(await kernel.control.call('porch_light.status', {}, cli), 'first', 'the old one answers until the swap');
  next.commit();
  gen.retire();
  t.equal(await kernel.control.call('porch_light.status', {}, cli), 'second');
  t.same(kernel.controlMethods.owned('plugin:porch-light'), ['porch_light.status']);

  // Registered while live: at once, and its undo removes it.
  const undo = next.context.control.register(method('porch_light.extra', 'extra'));
  t.equal(await kernel.control.call('porch_light.extra', {}, cli), 'extra');
  undo();
  await expectErrorAsync(t, () => kernel.control.call('porch_light.extra', {}, cli), 'HA_ERR_RPC_UNKNOWN_METHOD');

  await next.removeAll();
  await expectErrorAsync(t, () => kernel.control.call('porch_light.status', {}, cli), 'HA_ERR_RPC_UNKNOWN_METHOD');
  t.same(kernel.controlMethods.owned('plugin:porch-light'), []);
});

t.test('a plugin registers only in its own namespace, once, and not over the kernel', async (t) => {
  const kernel = await startKernel(t, { knowledge: null });
  kernel.control.register(method('kbtree.kernel_owned', 'kernel'));
  const gen = generation(kernel);
  for (const name of ['config.set', 'kbtreex.token', 'kbtree', 'kbtree.', 'kbtree.Token', 'kbtree.bad-name']) {
    const error = expectError(t, () => gen.context.control.register(method(name, 'x')), 'HA_ERR_PLUGIN_PERMISSION');
    t.match(error.message, /kbtree\.<name>/, name);
  }
  expectError(t, () => gen.context.control.register(method('kbtree.kernel_owned', 'x')), 'HA_ERR_PLUGIN_LOAD');
  gen.context.control.register(method('kbtree.token', 'x'));
  expectError(t, () => gen.context.control.register(method('kbtree.token', 'y')), 'HA_ERR_PLUGIN_LOAD');

  // A clash that appears between staging and commit leaves everything as it was.
  const clash = generation(kernel, { name: 'porch' });
  clash.context.control.register(method('porch.status', 'plugin'));
  kernel.control.register(method('porch.status', 'kernel'));
  const toolsBefore = kernel.services.tools.list().length;
  expectError(t, () => clash.commit(), 'HA_ERR_PLUGIN_LOAD');
  t.equal(await kernel.control.call('porch.status', {}, cli), 'kernel');
  t.equal(kernel.services.tools.list().length, toolsBefore);
  t.notOk(clash.live);
});

t.test('external plugins may not register control methods; a daemon without the table says so', async (t) => {
  const kernel = await startKernel(t, { knowledge: null });
  const external = generation(kernel, { name: 'porch', trust: 'external' });
  expectError(t, () => external.context.control.register(method('porch.status', 'x')), 'HA_ERR_PLUGIN_PERMISSION');

  const { controlMethods: _, ...withoutTable } = kernel.services;
  const bare = generation({ ...kernel, services: withoutTable }, { name: 'porch' });
  expectError(t, () => bare.context.control.register(method('porch.status', 'x')), 'HA_ERR_UNAVAILABLE');
});

t.test('knowledge: read operations for every plugin, writes for built-in ones, unavailable without a library', async (t) => {
  const kernel = await startKernel(t);
  const builtin = generation(kernel, { name: 'notes' }).context.knowledge;
  const external = generation(kernel, { name: 'guest', trust: 'external' }).context.knowledge;
  t.ok(builtin.available());
  t.ok(external.available());

  await builtin.add('Recipes/Soup/Tomato Soup', 'Roast tomatoes with garlic, blend with stock.');
  await expectErrorAsync(t, () => builtin.add('recipes/soup/tomato_soup', 'again'), 'HA_ERR_KNOWLEDGE_EXISTS');
  await builtin.add('recipes/soup/tomato_soup', 'Roast tomatoes with garlic and basil, blend with stock.', { overwrite: true });
  await builtin.add('house/stopcock', 'The stopcock is under the kitchen sink.');
  await expectErrorAsync(t, () => external.add('house/x', 'y'), 'HA_ERR_PLUGIN_PERMISSION');

  for (const [label, kb] of [
    ['built-in', builtin],
    ['external', external],
  ] as const) {
    t.same(await kb.categories(), ['house', 'recipes', 'recipes/soup'], `${label}: categories`);
    t.same(
      await kb.categoryCounts(),
      [
        { category: 'house', count: 1 },
        { category: 'recipes', count: 1 },
        { category: 'recipes/soup', count: 1 },
      ],
      `${label}: counts`,
    );
    t.same((await kb.list()).map((e) => e.name).sort(), ['house/stopcock', 'recipes/soup/tomato_soup'], `${label}: list`);
    const tree = await kb.tree({ category: 'recipes', include_items: true, preview_limit: 20 });
    t.match(tree, { path: 'recipes', total_count: 1, children: [{ path: 'recipes/soup', items: [{ path: 'recipes/soup/tomato_soup' }] }] });
    const hits = await kb.search('basil tomatoes', { limit: 1, category: 'recipes' });
    t.equal(hits.length, 1);
    t.equal(hits[0]?.name, 'recipes/soup/tomato_soup', `${label}: search sees the overwritten text`);
    const inRecipes = await kb.search('stopcock', { category: 'recipes' });
    t.notOk(
      inRecipes.some((hit) => hit.name === 'house/stopcock'),
      `${label}: search stays in the category`,
    );
    t.equal((await kb.search('stopcock'))[0]?.name, 'house/stopcock');
  }
  await expectErrorAsync(t, () => builtin.tree({ category: 'garden' }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');

  const none = await startKernel(t, { knowledge: null });
  const missing = generation(none).context.knowledge;
  t.notOk(missing.available());
  for (const call of [
    () => missing.search('x'),
    () => missing.list(),
    () => missing.tree(),
    () => missing.categories(),
    () => missing.categoryCounts(),
    () => missing.add('a/b', 'c'),
  ]) {
    await expectErrorAsync(t, call, 'HA_ERR_UNAVAILABLE');
  }
});
