/**
 * The IO manager: the registry of output channels, the routing table from input sources to
 * default output channels, capability-checked sends, and the output tools the model uses. The
 * channels live in one immutable {@link IoTables} value that every change replaces with a single
 * assignment (see io-tables.ts), so readers never see half a reload.
 */
import { type Clock, systemClock } from '../shared/clock.js';
import { HomeAgentError } from '../shared/errors.js';
import type { ToolDefinition } from '../shared/tool.js';
import { canCarry, isOutputType, typesOf } from './capabilities.js';
import { applyChange, EMPTY_TABLES, IO_NAME, type IoTables, type TableChange } from './io-tables.js';
import { channelTools, IO_OWNER, listTool, type OutputToolDeps } from './output-tools.js';
import type { InputEvent, OutputChannel, OutputEvent } from './types.js';

export type { IoTables } from './io-tables.js';

export interface IoManagerOptions {
  clock?: Clock;
}

/** What one owner (a plugin, a device driver) contributes; replaced as a whole on reload. */
export interface OwnerSet {
  channels?: readonly OutputChannel[];
}

/** The snapshot plus the tools derived from it, swapped together. */
interface State {
  tables: IoTables;
  /** The io-owned tools for exactly these channels, built once per change so tools() is cheap. */
  tools: readonly ToolDefinition[];
}

export class IoManager {
  readonly name = 'io';
  /** The owner of the output tools, so the manager is a ToolProvider for the agent's registry. */
  readonly owner = IO_OWNER;
  readonly #clock: Clock;
  readonly #toolDeps: OutputToolDeps;
  readonly #listTool: ToolDefinition;
  #state: State;
  /** source → channel name; replaced, never mutated, like the tables. */
  #routes: ReadonlyMap<string, string> = new Map();

  constructor(options: IoManagerOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#toolDeps = {
      channel: (name) => this.#state.tables.channels.get(name),
      channels: () => this.#state.tables.channels.values(),
      send: (event) => this.send(event),
      clock: this.#clock,
    };
    this.#listTool = listTool(this.#toolDeps);
    this.#state = { tables: EMPTY_TABLES, tools: [this.#listTool] };
  }

  // ---- registry ----

  /** The current tables. A snapshot stays valid and unchanged whatever is registered afterwards. */
  snapshot(): IoTables {
    return this.#state.tables;
  }

  registerChannel(channel: OutputChannel): void {
    this.#change({ addChannels: [channel] });
  }

  unregisterChannel(name: string): void {
    this.#change({ removeChannels: [name] });
  }

  /**
   * Replaces everything `owner` registered with `set` in one swap (a plugin reload). Either the
   * whole new set is valid and goes in, or HA_ERR_IO_DEFINITION is thrown and nothing changes.
   */
  replaceOwner(owner: string, set: OwnerSet): void {
    for (const channel of set.channels ?? []) {
      if (channel.owner !== owner) {
        throw new HomeAgentError('HA_ERR_IO_DEFINITION', `${channel.name} belongs to ${channel.owner}, not to ${owner}`);
      }
    }
    this.#change({ removeOwner: owner, addChannels: set.channels ?? [] });
  }

  /** Removes everything `owner` registered (a plugin stopping). */
  removeOwner(owner: string): void {
    this.#change({ removeOwner: owner });
  }

  channel(name: string): OutputChannel | undefined {
    return this.#state.tables.channels.get(name);
  }

  channels(): OutputChannel[] {
    return [...this.#state.tables.channels.values()];
  }

  // ---- tools ----

  /** The output tools for the current channels (the agent's registry calls this every turn). */
  tools(): readonly ToolDefinition[] {
    return this.#state.tools;
  }

  // ---- routing ----

  /** Answers to inputs from `source` go to `channel` by default (checked when routing, not here: the channel may register later). */
  setRoute(source: string, channel: string): void {
    if (typeof source !== 'string' || source === '') throw new HomeAgentError('HA_ERR_IO_DEFINITION', 'a route needs a non-empty source');
    if (!IO_NAME.test(channel))
      throw new HomeAgentError('HA_ERR_IO_DEFINITION', `route target ${JSON.stringify(channel)} is not a channel name`);
    const routes = new Map(this.#routes);
    routes.set(source, channel);
    this.#routes = routes;
  }

  clearRoute(source: string): void {
    if (!this.#routes.has(source)) return;
    const routes = new Map(this.#routes);
    routes.delete(source);
    this.#routes = routes;
  }

  /**
   * The default output channel for an input: its explicit route, else a channel named like the
   * input's channel, else one that answers that conversation (OutputChannel.answers), else one
   * named like its source; undefined when none of them is registered.
   */
  route(input: Pick<InputEvent, 'source' | 'channel'>): string | undefined {
    const channels = this.#state.tables.channels;
    const explicit = this.#routes.get(input.source);
    for (const candidate of [explicit, input.channel]) {
      if (candidate !== undefined && channels.has(candidate)) return candidate;
    }
    for (const channel of channels.values()) {
      if (channel.answers?.includes(input.channel)) return channel.name;
    }
    return channels.has(input.source) ? input.source : undefined;
  }

  // ---- sending ----

  /** Delivers `event` to its channel after checking the channel exists and can carry its type. */
  async send(event: OutputEvent): Promise<void> {
    const channel = this.#state.tables.channels.get(event.channel);
    if (!channel) {
      throw new HomeAgentError('HA_ERR_IO_CHANNEL_UNKNOWN', `no output channel named ${JSON.stringify(event.channel)}`, {
        details: { known: [...this.#state.tables.channels.keys()] },
      });
    }
    if (!isOutputType(event.type) || !canCarry(channel.capabilities, event.type)) {
      const carries = typesOf(channel.capabilities);
      throw new HomeAgentError(
        'HA_ERR_IO_CAPABILITY',
        `channel ${channel.name} cannot carry ${String(event.type)}; it carries ${carries.join(', ')}`,
        {
          details: { channel: channel.name, type: event.type, carries },
        },
      );
    }
    await channel.send(event);
  }

  // ---- internals ----

  /** Computes the new state completely, then swaps it in with one assignment. */
  #change(change: TableChange): void {
    const before = this.#state.tables;
    const tables = applyChange(before, change);
    const channelsChanged =
      tables.channels.size !== before.channels.size || [...tables.channels].some(([n, c]) => before.channels.get(n) !== c);
    const tools = channelsChanged ? this.#buildTools(tables) : this.#state.tools;
    this.#state = { tables, tools };
  }

  #buildTools(tables: IoTables): ToolDefinition[] {
    const tools: ToolDefinition[] = [this.#listTool];
    for (const channel of tables.channels.values()) tools.push(...(channelTools(channel, this.#toolDeps) as ToolDefinition[]));
    return tools;
  }
}
