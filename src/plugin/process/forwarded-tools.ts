/**
 * A plugin process's tools as the daemon's registry sees them. Each name is registered once with
 * the plugin's context and kept while the process crashes and restarts, so a call in between gets
 * "the plugin is restarting" rather than "no such tool"; every call goes to whichever process runs
 * at that moment. A definition that changed across a restart is registered afresh.
 */
import type { PluginContext } from '../../sdk/plugin.js';
import type { ToolContext } from '../../shared/tool.js';
import type { WireToolDefinition } from './protocol.js';

export type ToolInvoker = (name: string, args: Record<string, unknown>, context: ToolContext) => Promise<unknown>;

interface Registered {
  /** The definition as JSON, to notice a change. */
  key: string;
  unregister: () => void;
}

export class ForwardedTools {
  readonly #context: PluginContext;
  readonly #invoke: ToolInvoker;
  readonly #registered = new Map<string, Registered>();

  constructor(context: PluginContext, invoke: ToolInvoker) {
    this.#context = context;
    this.#invoke = invoke;
  }

  /** Registers the tool unless the same definition already is; throws what the context throws (name taken or not allowed). */
  add(definition: WireToolDefinition): void {
    const key = JSON.stringify(definition);
    const current = this.#registered.get(definition.name);
    if (current?.key === key) return;
    if (current) this.remove(definition.name);
    const name = definition.name;
    const unregister = this.#context.tools.register<Record<string, unknown>>({
      ...definition,
      execute: (args, context) => this.#invoke(name, args, context),
    });
    this.#registered.set(name, { key, unregister });
  }

  remove(name: string): void {
    const registered = this.#registered.get(name);
    if (!registered) return;
    this.#registered.delete(name);
    registered.unregister();
  }

  /** After a restart: drops the tools the new process did not register again. */
  retainOnly(names: ReadonlySet<string>): void {
    for (const name of [...this.#registered.keys()]) if (!names.has(name)) this.remove(name);
  }

  clear(): void {
    for (const name of [...this.#registered.keys()]) this.remove(name);
  }

  names(): string[] {
    return [...this.#registered.keys()];
  }
}
