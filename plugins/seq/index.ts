/**
 * The seq plugin (the original's tool sequences): seq_create, seq_list, seq_help, seq_delete,
 * seq_run, seq_call and seq_when_call. A sequence is named groups of tool calls; it is checked whole
 * when created (its tools exist and are allowed, its references are declared, it does not call
 * itself), kept in <plugin data>/sequences.db, and run by SequenceRunner. Its tier is the highest of
 * the tools it reaches, declared per call (`tier_for`), so the kernel's trust policies and the
 * owner's confirmation gate treat seq_run of a sequence with a dangerous step exactly as that step;
 * only after the gate has let the call through does the plugin run the steps (ctx.tools.call).
 *
 * A message that is just a sequence's name ("good night", "晚安", or "/seq good night", which an
 * automation's input action can send) runs it without the model when its steps only read or act
 * and the sender may act; a dangerous one is left to the conversation, where the gate asks the owner,
 * and one the intent engine carries out itself (a sequence named like a device command) to it.
 */
import {
  definePlugin,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  type StageContext,
  type ToolContext,
  ToolError,
  type ToolTier,
  textLanguage,
} from '../../src/sdk/index.js';
import { forbiddenReason } from './forbidden-tools.js';
import { helpText } from './help-text.js';
import { byNameAnswer, sequenceNameIn } from './run-by-name.js';
import { seqMethods } from './seq-methods.js';
import { parseCondition } from './sequence-condition.js';
import {
  callTarget,
  checkDefinition,
  checkedName,
  isSequenceCall,
  nameKey,
  type Sequence,
  type ToolLookup,
} from './sequence-definition.js';
import { findCycle, reachTier, stepLines } from './sequence-graph.js';
import { findGroup, type SequenceRun, SequenceRunner } from './sequence-runner.js';
import { SequenceStore } from './sequence-store.js';
import type { SeqSettings } from './settings-schema.js';

export { forbiddenReason } from './forbidden-tools.js';
export { SEQUENCES_FILE } from './sequence-store.js';

/** Where the intent engine notes an input it carries out (src/intent/intent-stage.ts INTENT_EXTRA). */
const INTENT_NOTE = 'intent';
const NAME = { type: 'string', minLength: 1, maxLength: 64, description: 'The sequence name (seq_list shows them).' };
const ARGS = { type: 'object', description: 'Arguments of the sequence, read inside it as $args.<name>.' };
const CALL_PROPERTIES = {
  name: { ...NAME, description: 'The sequence whose group target is (not needed with #name).' },
  target: { type: 'string', minLength: 1, maxLength: 65, description: 'A group name of the sequence, or #name for a whole sequence.' },
  args: ARGS,
};

interface CallArgs {
  name?: string;
  target: string;
  args?: Record<string, unknown>;
  when?: string;
}

export class SeqPlugin implements PluginInstance {
  readonly #ctx: PluginContext<SeqSettings>;
  readonly #unregister: Array<() => void> = [];
  #store: SequenceStore | undefined;
  #runner: SequenceRunner | undefined;
  /** The steps the owner was last shown per sequence (or group) awaiting approval. */
  readonly #shown = new Map<string, string>();

  constructor(ctx: PluginContext<SeqSettings>) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    const { describe, call } = this.#ctx.tools;
    if (!describe || !call)
      throw new ToolError({
        reason: 'unavailable',
        detail: 'the seq plugin needs a built-in plugin context (tools.describe and tools.call)',
      });
    this.#store = new SequenceStore(this.#ctx.database);
    this.#runner = new SequenceRunner({
      lookup: (name) => this.#lookup(name),
      tools: { describe, call },
      maxDepth: () => this.#ctx.settings.get('max_call_depth'),
    });
    this.#registerTools();
    this.#unregister.push(this.#ctx.stages.register('on_input', (stage) => this.#runByName(stage)));
    for (const method of seqMethods({
      list: () => this.#list(),
      run: (name, args, actor) => this.#runForOwner(name, args, actor),
      delete: (name, actor) => this.#delete(name, { source: 'control', channel: 'control', trust: 'owner', actor }),
    }))
      this.#unregister.push(this.#ctx.control.register(method));
    const kept = this.#store.count();
    if (kept > 0) this.#ctx.log.info({ sequences: kept }, `${kept} stored sequences`);
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
    this.#store?.close();
    this.#store = undefined;
    this.#runner = undefined;
  }

  health(): Required<PluginHealth> {
    const store = this.#store;
    if (!store) return { ok: false, detail: 'not started', detail_zh: '未启动' };
    const moved = store.recovered;
    const count = store.count();
    return moved === undefined
      ? { ok: true, detail: `${count} sequences`, detail_zh: `${count} 条序列` }
      : {
          ok: true,
          detail: `${count} sequences; the damaged sequences.db was moved to ${moved}`,
          detail_zh: `${count} 条序列；损坏的 sequences.db 已移到 ${moved}`,
        };
  }

  #registerTools(): void {
    const tools = this.#ctx.tools;
    const timeout_ms = this.#ctx.settings.get('run_timeout_s') * 1000;
    this.#unregister.push(
      tools.register<Record<string, unknown>>({
        name: 'seq_create',
        tier: 'act',
        description:
          'Creates or replaces a tool sequence: groups run one after another, the calls of a group side by side. Each call is {tool, args, as?}; args may use $args.<x> (declared in "in") and $results.<as> of earlier groups. Call seq_help first for the format and an example.',
        parameters: {
          type: 'object',
          properties: {
            name: NAME,
            description: { type: 'string', maxLength: 500, description: 'What the sequence does, in one sentence.' },
            in: {
              type: 'object',
              description:
                'Declared arguments: {"room": "string"} or {"room": {"type": "string", "required": false, "default": "kitchen"}}.',
            },
            out: { type: 'array', items: { type: 'string' }, description: 'Result names (as) the sequence hands back; all when absent.' },
            groups: {
              type: 'array',
              minItems: 1,
              items: { type: 'object' },
              description: 'Groups in order: {name?, when?, parallel?, on_error?: "stop"|"continue", calls: [{tool, args, as?}]}.',
            },
          },
          required: ['name', 'groups'],
          additionalProperties: false,
        },
        execute: (args, context) => this.#create(args, context),
      }),
      tools.register<Record<string, never>>({
        name: 'seq_list',
        tier: 'read',
        parallel_safe: true,
        description: 'Lists the stored tool sequences with their arguments, results, groups and tier.',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
        execute: () => this.#list(),
      }),
      tools.register<{ name?: string }>({
        name: 'seq_help',
        tier: 'read',
        parallel_safe: true,
        description: 'Without a name: the sequence format with a complete example. With a name: how to call that sequence.',
        parameters: { type: 'object', properties: { name: NAME }, additionalProperties: false },
        execute: (args) => (args.name === undefined ? helpText() : this.#describe(this.#require(args.name))),
      }),
      tools.register<{ name: string }>({
        name: 'seq_delete',
        tier: 'act',
        description: 'Deletes a stored sequence.',
        parameters: { type: 'object', properties: { name: NAME }, required: ['name'], additionalProperties: false },
        execute: (args, context) => this.#delete(args.name, context),
      }),
      tools.register<{ name: string; args?: Record<string, unknown> }>({
        name: 'seq_run',
        tier: 'act',
        tier_for: (args) => this.#tierOf(args.name),
        confirmation_detail: (args) => this.#steps({ target: `#${args.name}` }),
        timeout_ms,
        description:
          'Runs a stored sequence with its arguments and returns what each group did and the named results. As dangerous as its most dangerous step.',
        parameters: { type: 'object', properties: { name: NAME, args: ARGS }, required: ['name'], additionalProperties: false },
        execute: (args, context) => this.#run(this.#require(args.name), args.args ?? {}, context),
      }),
      tools.register<CallArgs>({
        name: 'seq_call',
        tier: 'act',
        tier_for: (args) => this.#callTier(args),
        confirmation_detail: (args) => this.#steps(args),
        timeout_ms,
        description: 'Runs one group of a sequence (name + target group) or a whole sequence (target #name) and returns its results.',
        parameters: { type: 'object', properties: CALL_PROPERTIES, required: ['target'], additionalProperties: false },
        execute: (args, context) => this.#call(args, context),
      }),
      tools.register<CallArgs>({
        name: 'seq_when_call',
        tier: 'act',
        tier_for: (args) => this.#callTier(args),
        confirmation_detail: (args) => this.#steps(args),
        timeout_ms,
        description:
          'Like seq_call, only when the condition holds (it reads the args passed: "$args.away == true"); otherwise nothing runs and the answer says it was skipped.',
        parameters: {
          type: 'object',
          properties: {
            ...CALL_PROPERTIES,
            when: {
              type: 'string',
              minLength: 1,
              maxLength: 200,
              description: 'true, false, $args.x, or $args.x == "value" (also !=, >, <, >=, <=, contains).',
            },
          },
          required: ['target', 'when'],
          additionalProperties: false,
        },
        execute: (args, context) => this.#call(args, context),
      }),
    );
  }

  #create(args: Record<string, unknown>, context: ToolContext): unknown {
    const store = this.#storeNow();
    const settings = this.#ctx.settings.values();
    const sequence = checkDefinition(args, this.#toolLookup(), settings);
    const cycle = findCycle(sequence, (name) => this.#lookup(name));
    if (cycle)
      throw new ToolError({
        reason: 'rejected',
        field: 'groups',
        detail: `HA_ERR_SEQ_CYCLE: ${sequence.name} would call itself: ${cycle.join(' → ')}`,
        hint: 'a sequence may call other sequences, never one that calls it back',
      });
    if (!store.has(sequence.name) && store.count() >= settings.max_sequences)
      throw new ToolError({
        reason: 'rejected',
        detail: `HA_ERR_SEQ_LIMIT: ${store.count()} sequences are kept, the most allowed is ${settings.max_sequences} (plugin.seq.max_sequences)`,
        hint: 'delete one with seq_delete',
      });
    const replaced = store.save(sequence, `${context.source}:${context.channel}`, Date.now());
    const tier = this.#tier(sequence);
    this.#ctx.audit(replaced ? 'seq.replace' : 'seq.create', { name: sequence.name, tier, source: context.source, trust: context.trust });
    const waiting = this.#missingTargets(sequence);
    return {
      [replaced ? 'replaced' : 'created']: sequence.name,
      tier,
      groups: sequence.groups.map((g) => ({ name: g.name, calls: g.calls.length })),
      ...(waiting.length === 0 ? {} : { note: `it calls ${waiting.join(', ')}, which do not exist yet; running it fails until they do` }),
    };
  }

  #list(): unknown {
    return {
      sequences: this.#storeNow()
        .list()
        .map((entry) => ('broken' in entry ? entry : this.#describe(entry.sequence))),
    };
  }

  #describe(sequence: Sequence): Record<string, unknown> {
    return {
      name: sequence.name,
      description: sequence.description,
      in: sequence.in,
      out: sequence.out,
      tier: this.#tier(sequence),
      groups: sequence.groups.map((g) => ({
        name: g.name,
        ...(g.when === undefined ? {} : { when: g.when }),
        tools: g.calls.map((c) => c.tool),
      })),
      run_with: `seq_run {"name": ${JSON.stringify(sequence.name)}, "args": {${Object.keys(sequence.in)
        .map((k) => `"${k}": …`)
        .join(', ')}}}`,
    };
  }

  /** `seq.run` from an owner-proven caller (homeagentctl, the web page): the owner's own decision, whatever the tier. */
  async #runForOwner(name: string, args: Record<string, unknown>, actor: string): Promise<unknown> {
    const sequence = this.#require(name);
    const tier = this.#tier(sequence);
    this.#ctx.audit('seq.run', { name: sequence.name, tier, actor, via: 'control' });
    const context: ToolContext = {
      signal: AbortSignal.timeout(this.#ctx.settings.get('run_timeout_s') * 1000),
      task_id: `seq.run:${Date.now()}`,
      call_id: 'seq.run',
      source: 'control',
      channel: 'control',
      trust: 'owner',
    };
    return shown(await this.#runnerNow().run(sequence, args, context), tier);
  }

  #delete(name: string, context: Pick<ToolContext, 'source' | 'channel' | 'trust'> & { actor?: string }): unknown {
    // Found through the listing, not #require: a row that no longer reads must still be deletable.
    const store = this.#storeNow();
    const entry = store.list().find((e) => nameKey('broken' in e ? e.name : e.sequence.name) === nameKey(checkedName(name)));
    if (!entry) return this.#require(name);
    const deleted = 'broken' in entry ? entry.name : entry.sequence.name;
    store.delete(deleted);
    this.#ctx.audit('seq.delete', {
      name: deleted,
      source: context.source,
      trust: context.trust,
      ...(context.actor ? { actor: context.actor } : {}),
    });
    return { deleted };
  }

  async #run(sequence: Sequence, args: Record<string, unknown>, context: ToolContext): Promise<unknown> {
    const tier = this.#tier(sequence);
    if (tier === 'dangerous') {
      this.#checkUnchanged(sequence, undefined);
      this.#ctx.audit('seq.run', { name: sequence.name, tier, source: context.source, trust: context.trust });
    }
    return shown(await this.#runnerNow().run(sequence, args, context), tier);
  }

  /**
   * A dangerous run goes ahead only with the steps the owner was shown: a sequence replaced between
   * the approval request and the approval is refused, so nobody can swap in other steps meanwhile.
   */
  #checkUnchanged(sequence: Sequence, group: string | undefined): void {
    const key = shownKey(sequence.name, group);
    const asked = this.#shown.get(key);
    if (asked === undefined) return;
    this.#shown.delete(key);
    if (asked !== stepLines(sequence, group, (name) => this.#lookup(name)).join('\n'))
      throw new ToolError({
        reason: 'rejected',
        detail: `HA_ERR_SEQ_CHANGED: ${sequence.name} was changed after the owner was asked to approve it, so it did not run`,
        hint: 'ask again: the owner approves the steps it has now',
      });
  }

  async #call(args: CallArgs, context: ToolContext): Promise<unknown> {
    const nested = args.args ?? {};
    if (args.when !== undefined) {
      if (!parseCondition(args.when, 'when').evaluate(nested)) return { skipped: true, when: args.when, target: args.target };
    }
    const target = this.#target(args);
    const sequence = this.#require(target.sequence);
    if (target.group === undefined) return this.#run(sequence, nested, context);
    findGroup(sequence, target.group);
    const tier = reachTier(
      sequence,
      target.group,
      (name) => this.#lookup(name),
      (tool) => this.#toolTier(tool),
    );
    if (tier === 'dangerous') this.#checkUnchanged(sequence, target.group);
    return shown(await this.#runnerNow().runGroup(sequence, target.group, nested, context), tier);
  }

  #target(args: CallArgs): { sequence: string; group?: string } {
    if (!args.target.startsWith('#') && args.name === undefined)
      throw new ToolError({
        reason: 'required',
        field: 'name',
        detail: 'HA_ERR_SEQ_INVALID: a group target needs the sequence name',
        hint: 'or give target "#name" to run a whole sequence',
      });
    return callTarget({ ...args }, args.name ?? '');
  }

  /** A message that names a sequence runs it, when it only reads or acts and the sender may act. */
  async #runByName(stage: StageContext): Promise<void> {
    const { input } = stage;
    if (!this.#ctx.settings.get('run_by_name') || input.type !== 'text' || typeof input.payload !== 'string') return;
    const name = sequenceNameIn(input.payload);
    if (name === undefined) return;
    const sequence = this.#lookup(name);
    if (!sequence) return;
    // The intent engine's hook runs beside this one and marks, before its first await, an input it
    // carries out itself (a sequence named like a device command): never act on it twice.
    await Promise.resolve();
    if (stage.extra[INTENT_NOTE] !== undefined) return;
    const lang = textLanguage(input.payload);
    const tier = this.#tier(sequence);
    if (tier === 'dangerous') {
      // The conversation (the model) can still ask for it through the gate; without one, say why nothing ran.
      stage.fallback = byNameAnswer(lang, 'needs_owner', sequence.name);
      return;
    }
    if (tier === 'act' && !(await this.#mayAct(input.sender.trust))) return;
    const signal = AbortSignal.timeout(this.#ctx.settings.get('run_timeout_s') * 1000);
    const context: ToolContext = {
      signal,
      task_id: stage.task_id,
      call_id: 'seq-by-name',
      input_id: input.id,
      source: input.source,
      channel: input.channel,
      trust: stage.trust.level,
    };
    try {
      const run = await this.#runnerNow().run(sequence, {}, context);
      const steps = run.groups.reduce((n, g) => n + g.calls.length, 0);
      stage.response = byNameAnswer(lang, 'done', sequence.name, String(steps));
      this.#ctx.log.info({ task_id: stage.task_id, sequence: sequence.name, steps }, `sequence ${sequence.name} run by its name`);
    } catch (error) {
      const detail = error instanceof ToolError ? error.info.detail : String(error);
      stage.response = byNameAnswer(lang, 'failed', sequence.name, detail);
      this.#ctx.log.warn({ task_id: stage.task_id, sequence: sequence.name, err: error }, `sequence ${sequence.name} failed`);
    }
  }

  /** Owners may always act; the household where core.agent.household_act_tools lets it run seq_run; untrusted senders never by name. */
  async #mayAct(trust: string): Promise<boolean> {
    if (trust === 'owner') return true;
    if (trust !== 'household') return false;
    try {
      const view = (await this.#ctx.control.call(
        'config.get',
        { key: 'core.agent.household_act_tools' },
        { actor: `plugin:${this.#ctx.name}` },
      )) as { value?: unknown };
      const patterns = Array.isArray(view.value) ? (view.value as unknown[]).map(String) : ['*'];
      return patterns.some((p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`).test('seq_run'));
    } catch {
      return false;
    }
  }

  /** The steps a call would run, for the owner's approval request. */
  #steps(args: CallArgs): string[] {
    try {
      const target = this.#target(args);
      const sequence = this.#lookup(target.sequence);
      if (sequence === undefined) return [];
      const lines = stepLines(sequence, target.group, (name) => this.#lookup(name));
      // Remembered so that the approved run can tell whether the sequence changed meanwhile.
      this.#shown.delete(shownKey(sequence.name, target.group));
      this.#shown.set(shownKey(sequence.name, target.group), lines.join('\n'));
      while (this.#shown.size > MAX_SHOWN) this.#shown.delete(this.#shown.keys().next().value as string);
      return lines;
    } catch {
      return [];
    }
  }

  #tierOf(name: string): ToolTier {
    const sequence = this.#lookup(name);
    return sequence === undefined ? 'read' : this.#tier(sequence);
  }

  #callTier(args: CallArgs): ToolTier {
    try {
      const target = this.#target(args);
      const sequence = this.#lookup(target.sequence);
      if (!sequence) return 'read';
      return reachTier(
        sequence,
        target.group,
        (name) => this.#lookup(name),
        (tool) => this.#toolTier(tool),
      );
    } catch {
      return 'act';
    }
  }

  #tier(sequence: Sequence): ToolTier {
    return reachTier(
      sequence,
      undefined,
      (name) => this.#lookup(name),
      (tool) => this.#toolTier(tool),
    );
  }

  #toolTier(tool: string): ToolTier | undefined {
    return this.#ctx.tools.describe?.(tool)?.tier;
  }

  #toolLookup(): ToolLookup {
    return { tier: (tool) => this.#toolTier(tool), forbidden: forbiddenReason };
  }

  #missingTargets(sequence: Sequence): string[] {
    const missing = new Set<string>();
    for (const group of sequence.groups)
      for (const call of group.calls) {
        if (!isSequenceCall(call.tool)) continue;
        const target = callTarget(call.args, sequence.name);
        if (target.sequence !== sequence.name && !this.#lookup(target.sequence)) missing.add(target.sequence);
      }
    return [...missing];
  }

  #lookup(name: string): Sequence | undefined {
    try {
      return this.#storeNow().get(checkedName(name))?.sequence;
    } catch {
      return undefined;
    }
  }

  #require(name: string): Sequence {
    let sequence: Sequence | undefined;
    try {
      sequence = this.#storeNow().get(checkedName(name))?.sequence;
    } catch (error) {
      if (error instanceof ToolError) throw error;
      throw new ToolError({
        reason: 'failed',
        field: 'name',
        detail: `HA_ERR_SEQ_INVALID: the stored definition of ${name} does not read (${error instanceof Error ? error.message : String(error)})`,
        hint: 'create it again with seq_create, or delete it with seq_delete',
      });
    }
    if (!sequence)
      throw new ToolError({
        reason: 'not_found',
        field: 'name',
        detail: `HA_ERR_SEQ_NOT_FOUND: there is no sequence named ${name}`,
        hint: 'seq_list shows the stored sequences',
      });
    return sequence;
  }

  #storeNow(): SequenceStore {
    if (!this.#store) throw new ToolError({ reason: 'unavailable', detail: 'the seq plugin is not running' });
    return this.#store;
  }

  #runnerNow(): SequenceRunner {
    if (!this.#runner) throw new ToolError({ reason: 'unavailable', detail: 'the seq plugin is not running' });
    return this.#runner;
  }
}

/** Approval requests remembered at most (the gate itself keeps 32 pending). */
const MAX_SHOWN = 64;

function shownKey(sequence: string, group: string | undefined): string {
  return group === undefined ? nameKey(sequence) : `${nameKey(sequence)}#${group}`;
}

/** A run as the model reads it. */
function shown(run: SequenceRun, tier: ToolTier): unknown {
  return { ok: true, sequence: run.sequence, tier, groups: run.groups, results: run.results };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export default definePlugin<SeqSettings>((ctx) => new SeqPlugin(ctx));
