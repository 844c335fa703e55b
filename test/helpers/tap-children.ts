/** Tests that start out-of-process plugins: keep tap's instrumentation out of the plugin children. */
type SpawnListener = (options: { args: readonly string[]; env: Record<string, string> }) => void;

/**
 * tap instruments every process a test spawns (NODE_OPTIONS=--import its loader, through the
 * process-on-spawn hook). A plugin child under the permission model may not read that loader and
 * would die at once; the daemon never runs under tap, so the instrumentation is taken out again
 * for plugin children only (this listener runs after tap's).
 */
export function keepTapOutOfPluginChildren(): void {
  const key = Symbol.for('process-on-spawn@*:singletonId');
  const state = (globalThis as unknown as Record<symbol, { listeners: SpawnListener[] } | undefined>)[key];
  if (!state || state.listeners.some((l) => l.name === 'withoutTap')) return;
  state.listeners.push(function withoutTap(options) {
    if (!options.args.some((a) => a.endsWith('child-runtime.js'))) return;
    options.env = Object.fromEntries(Object.entries(options.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('_TAPJS_')));
  });
}
