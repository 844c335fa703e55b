#!/usr/bin/env node
/**
 * The composition root and the `homeagent` executable. It builds every part in layer order,
 * starts the services in order, stops them in reverse on SIGTERM/SIGINT, and is imported by
 * nothing.
 *
 *   homeagent run [--config FILE]        run the daemon
 *   homeagent restore FILE [--config F]  replace the state database by a backup (daemon stopped)
 *   homeagent memory-eval --locomo DIR [...]  measure memory recall on LoCoMo-format conversations
 *   homeagent intent-eval --tests DIR [...]   measure the local intent engine
 *   homeagent tracker-apply|tracker-recover --root DIR --state-dir DIR  (root, from systemd)
 *   homeagent version | help
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, inputText } from './agent/agent.js';
import { ConfirmationGate } from './agent/confirmation-gate.js';
import { CONFIRMATION_NOTICE, registerConfirmationMethods } from './agent/confirmation-methods.js';
import { Persona } from './agent/persona.js';
import { PromptBuilder } from './agent/prompt-builder.js';
import { StageRegistry } from './agent/stage-registry.js';
import { ToolExecutor } from './agent/tool-executor.js';
import { ToolRegistry } from './agent/tool-registry.js';
import { AutomationEngine } from './automation/automation-engine.js';
import { registerAutomationMethods } from './automation/automation-methods.js';
import { checkRules } from './automation/rule-check.js';
import { BUILTIN_DEFINITIONS, type SettingChecks } from './config/definitions.js';
import { type LoadedConfig, loadConfig } from './config/loader.js';
import { type RuntimePaths, resolvePaths } from './config/paths.js';
import type { AutomationRule } from './config/schema.js';
import { SettingsRegistry } from './config/settings-registry.js';
import { EventBus } from './events/event-bus.js';
import { registerEntityMethods } from './home/entity-methods.js';
import { EntityRegistry } from './home/entity-registry.js';
import { entityTools } from './home/entity-tools.js';
import { createIntentEngine } from './intent/intent-engine.js';
import { canCarry } from './io/capabilities.js';
import { InputScheduler } from './io/input-scheduler.js';
import { IoManager } from './io/io-manager.js';
import type { InputEvent } from './io/types.js';
import { registerKnowledgeMethods } from './knowledge/knowledge-methods.js';
import { KnowledgeService } from './knowledge/knowledge-service.js';
import { knowledgeTools } from './knowledge/knowledge-tools.js';
import { MediaUpkeep } from './knowledge/media-upkeep.js';
import { registerListMethods } from './lists/list-methods.js';
import { ListStore } from './lists/list-store.js';
import { listTools } from './lists/list-tools.js';
import { LuaAdapterLibrary } from './llm/lua/lua-adapter.js';
import { luaModelFactory } from './llm/lua/lua-model.js';
import { createModelFactory } from './llm/model-factory.js';
import { ProviderManager, resolveSources } from './llm/provider-manager.js';
import { LogManager } from './log/logger.js';
import { runMemoryEvalCommand } from './memory/eval/memory-eval-command.js';
import { registerMemoryMethods } from './memory/memory-methods.js';
import { MemoryService, type RecordedInput, SELF_CHANNEL, SELF_SOURCE } from './memory/memory-service.js';
import { ControlRegistry } from './plugin/control-registry.js';
import { HttpRouteRegistry } from './plugin/http-routes.js';
import { PluginControlMethods } from './plugin/plugin-generation.js';
import { PluginHost } from './plugin/plugin-host.js';
import { registerPluginMethods } from './plugin/plugin-methods.js';
import { configSectionsOf } from './plugin/plugin-settings.js';
import { SkillLibrary } from './plugin/skills/skill-library.js';
import { createSkillDriver, skillManifest } from './plugin/skills/skill-plugin.js';
import { systemClock, systemTimerClock } from './shared/clock.js';
import { describeError, HomeAgentError, isHomeAgentError } from './shared/errors.js';
import { EXIT_CODES } from './shared/exit-codes.js';
import type { Service } from './shared/service.js';
import type { InputSender } from './shared/trust.js';
import { PACKAGE_ROOT, VERSION } from './shared/version.js';
import { MediaStore } from './store/media-store.js';
import { restoreDatabase } from './store/restore.js';
import { Store } from './store/store.js';
import { DaemonStatus } from './supervisor/daemon-status.js';
import { LoopDelayCheck } from './supervisor/health.js';
import { callerSender, registerKernelMethods } from './supervisor/kernel-methods.js';
import { Notifier } from './supervisor/notifier.js';
import { PidLock, runningOwner } from './supervisor/pid-lock.js';
import { ServiceRunner } from './supervisor/service-runner.js';
import { Supervisor } from './supervisor/supervisor.js';
import { selectTrackerBackend } from './tracker/backend-select.js';
import { registerChangeMethods } from './tracker/change-methods.js';
import { ChangeTracker } from './tracker/change-tracker.js';

const USAGE = `usage: homeagent <command>

  run [--config FILE]           run the daemon (configuration: defaults < FILE, $HOMEAGENT_CONFIG
                                or /etc/homeagent/config.yaml < HOMEAGENT_* environment)
  restore FILE [--config FILE]  replace the state database by a backup; the daemon must be stopped
  memory-eval --locomo DIR      measure memory recall on LoCoMo-format conversations (--help)
  intent-eval --tests DIR [--fixtures FILE] [--json] [--failures N]
                                measure the local intent engine on Home Assistant-format intent tests
  tracker-apply|tracker-recover --root DIR --state-dir DIR
                                commit or roll back the plugins overlay (run as root by systemd)
  version                       print the version
  help                          print this text`;

/** How often checked-off list items past core.lists.keep_done_days are cleared while running. */
const LIST_UPKEEP_MS = 6 * 3_600_000;

/** Merge proposals and doubtful facts: the house's own upkeep, acting on what anyone told it. */
const MEMORY_UPKEEP_SENDER: InputSender = { trust: 'household', id: SELF_SOURCE, proof: "the memory's own upkeep" };
/** An automation's input: a rule the owner wrote, fired by whatever triggered it. */
const AUTOMATION_SENDER: InputSender = { trust: 'household', id: 'automation', proof: 'an automation rule in the configuration' };

/** What the agent answers when no language model is configured. */
const OFFLINE_TEXT = [
  'I am offline: no language model is configured, so I cannot think this through right now.',
  'To connect one, give me a DeepSeek API key with `homeagentctl config set core.llm.api_key <key>`',
  '(or HOMEAGENT_LLM_API_KEY), or point core.llm.base_url at any OpenAI-compatible server, or at',
  'Ollama with core.llm.adapter set to ollama. More sources go in core.llm.sources.',
].join(' ');

async function main(argv: string[]): Promise<number> {
  // An offline tool with options of its own; it never touches the daemon's data.
  if (argv[0] === 'memory-eval') return runMemoryEvalCommand(argv.slice(1));
  if (argv[0] === 'intent-eval') return (await import('./intent/eval/intent-eval-command.js')).runIntentEvalCommand(argv.slice(1));
  // The privileged helpers of the plugins overlay, run as root by systemd units (docs/deploy.md).
  if (argv[0] === 'tracker-apply' || argv[0] === 'tracker-recover')
    return (await import('./tracker/tracker-helper.js')).runTrackerHelper(argv);
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    process.stderr.write(`homeagent: ${describeError(error)}\n${USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  const { command, file, config } = parsed;
  switch (command) {
    case 'run':
      return run(config);
    case 'restore':
      return restore(file, config);
    case 'version':
      process.stdout.write(`homeagent ${VERSION}\n`);
      return EXIT_CODES.OK;
    default:
      process.stdout.write(`${USAGE}\n`);
      return command === 'help' ? EXIT_CODES.OK : EXIT_CODES.USAGE;
  }
}

function parseCommandLine(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  const command = values.help ? 'help' : (positionals[0] ?? 'help');
  if (!['run', 'restore', 'version', 'help'].includes(command)) throw new Error(`unknown command ${command}`);
  if (command === 'restore' && positionals.length !== 2) throw new Error('restore needs exactly one backup file');
  if (command !== 'restore' && positionals.length > 1) throw new Error(`unexpected argument ${positionals[1]}`);
  return { command, file: positionals[1], config: values.config };
}

/** Checks the config schema cannot express, run at load and on every `config set`. */
const SETTING_CHECKS: SettingChecks = {
  'core.automations.rules': (rules) => {
    try {
      checkRules(rules as AutomationRule[]);
      return undefined;
    } catch (error) {
      // One line: each problem already names its rule and field.
      const problems = isHomeAgentError(error, 'HA_ERR_AUTOMATION_CONFIG')
        ? (error.details?.problems as Array<{ automation_id: string; field: string; problem: string }> | undefined)
        : undefined;
      return problems?.length ? problems.map((p) => `${p.automation_id}: ${p.field}: ${p.problem}`).join('; ') : describeError(error);
    }
  },
};

/** Loads the configuration or prints one line per problem; undefined means "exit 78". */
function loadOrReport(file: string | undefined): { loaded: LoadedConfig; paths: RuntimePaths } | undefined {
  try {
    const loaded = loadConfig(file === undefined ? { checks: SETTING_CHECKS } : { file, checks: SETTING_CHECKS });
    return { loaded, paths: resolvePaths(loaded) };
  } catch (error) {
    if (!isHomeAgentError(error)) throw error;
    reportConfigProblems(error);
    return undefined;
  }
}

/** One line per configuration problem on stderr (the terminal, or the journal under systemd). */
function reportConfigProblems(error: HomeAgentError): void {
  const problems = (error.details?.problems as string[] | undefined) ?? [error.message];
  process.stderr.write(`homeagent: refusing to start, the configuration is invalid (${error.code}):\n`);
  for (const problem of problems) process.stderr.write(`  ${problem}\n`);
}

async function run(configFile: string | undefined): Promise<number> {
  const boot = loadOrReport(configFile);
  if (!boot) return EXIT_CODES.CONFIG;
  const { loaded, paths } = boot;
  const core = loaded.config.core;

  const logs = new LogManager({
    level: core.log.level,
    levels: core.log.levels,
    recent: { lines: core.log.recent_lines, lineBytes: core.log.recent_line_bytes },
  });
  const log = logs.child('daemon');
  for (const warning of loaded.warnings) log.warn(warning);
  log.info({ version: VERSION, config_file: loaded.file ?? null, data_dir: paths.dataDir }, 'HomeAgent starting');

  mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(paths.runtimeDir, { recursive: true, mode: 0o750 });
  mkdirSync(join(paths.dataDir, 'inbox'), { recursive: true, mode: 0o750 });
  const lock = new PidLock(paths.pidFile);
  try {
    lock.acquire();
  } catch (error) {
    log.fatal({ err: error }, 'cannot start');
    process.stderr.write(`homeagent: ${describeError(error)}\n`);
    return isHomeAgentError(error, 'HA_ERR_DAEMON_ALREADY_RUNNING') ? EXIT_CODES.TEMP_FAIL : EXIT_CODES.SOFTWARE;
  }

  // Composition, in layer order. Constructors only assign; nothing runs until startAll().
  const clock = systemClock;
  const events = new EventBus(logs.child('events'));
  const store = new Store({
    databases: [
      { name: 'state', file: paths.stateDb, synchronous: 'FULL' },
      { name: 'memory', file: paths.memoryDb, synchronous: 'FULL' },
      // Derived from the files under <data>/knowledge and rebuildable from them.
      { name: 'knowledge', file: paths.knowledgeDb, synchronous: 'NORMAL' },
      // Written behind by the entity registry: a killed process or a power cut may lose the last
      // state reports (the devices report again at start); a clean stop loses nothing.
      { name: 'home', file: paths.homeDb, synchronous: 'NORMAL' },
    ],
    busyTimeoutMs: core.store.busy_timeout_ms,
    startupCheck: core.store.startup_check,
    log: logs.child('store'),
    clock,
  });
  const settings = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded,
    events,
    logs,
    clock,
    checks: SETTING_CHECKS,
  });
  const control = new ControlRegistry();
  const status = new DaemonStatus({ events, clock });
  const supervisorLog = logs.child('supervisor');
  const notifier = Notifier.create({ backend: core.supervisor.notify_backend, log: supervisorLog });
  const loop = new LoopDelayCheck(() => settings.config().core.supervisor.max_loop_delay_ms);
  // The change tracker of <data>/plugins (docs/changes.md): the plugin host is built further down.
  mkdirSync(paths.installedPluginsDir, { recursive: true, mode: 0o750 });
  const trackerLog = logs.child('tracker');
  const tracker: ChangeTracker = new ChangeTracker({
    backend: selectTrackerBackend({
      setting: core.tracker.backend,
      root: paths.installedPluginsDir,
      stateDir: paths.trackerStateDir,
      applyTimeoutMs: core.tracker.apply_timeout_ms,
      log: trackerLog,
    }),
    stateDir: paths.trackerStateDir,
    database: () => store.database('state'),
    plugins: {
      refresh: (folders, actor) => plugins.refresh(folders, actor),
      stopTracked: (actor) => plugins.stopTracked(actor),
    },
    settings: () => settings.config().core.tracker,
    events,
    log: trackerLog,
    audit: (record) => logs.audit(record),
    clock,
  });
  // The agent core: IO, tools, stages, language models, the agent and its scheduler.
  const agentLog = logs.child('agent');
  const io = new IoManager({ log: logs.child('io'), clock });
  const stages = new StageRegistry(agentLog, { timeoutMs: () => settings.config().core.agent.stage_timeout_ms });
  const tools = new ToolRegistry({ log: agentLog });
  tools.addProvider(io);
  tools.addProvider({ owner: 'devices', tools: () => io.deviceTools() });
  const confirmations = new ConfirmationGate({
    preauthorized: () => settings.config().core.agent.preauthorized_tools,
    ttlMs: () => settings.config().core.agent.confirmation_ttl_ms,
    now: () => clock.now(),
    events,
  });
  const executor = new ToolExecutor({
    registry: tools,
    stages,
    limits: () => settings.config().core.agent,
    log: agentLog,
    gate: confirmations,
    audit: (record) => logs.audit(record),
    actPolicy: () => ({
      household: settings.config().core.agent.household_act_tools,
      untrusted: settings.config().core.agent.untrusted_act_tools,
    }),
    // Calls of core.tracker.tracked_tools are recorded as change sets when they touch <data>/plugins.
    around: (call, run) =>
      settings.config().core.tracker.tracked_tools.includes(call.tool)
        ? tracker.track({ actor: 'agent', tool: call.tool, channel: call.channel, task_id: call.task_id }, run)
        : run(),
  });
  const memoryLog = logs.child('memory');
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => settings.config().core.agent,
    memory: () => settings.config().core.memory,
    dataDir: paths.dataDir,
    parserModelPath: () => settings.config().core.agent.onnx_model_path,
    // ToolDefinition.no_memory / cleaner decide what of a tool's result memory keeps.
    toolPolicy: (name) => tools.get(name),
    // Merge proposals and doubtful facts become queued inputs on the internal self channel. Not
    // awaited: the receipt only comes once the agent has finished the task.
    selfInput: (text) => {
      if (!providers.configured()) return false;
      void scheduler
        .submit(
          {
            id: randomUUID(),
            source: SELF_SOURCE,
            channel: SELF_CHANNEL,
            sender: MEMORY_UPKEEP_SENDER,
            type: 'text',
            payload: text,
            meta: {},
            received_at: clock.now(),
            level: 0,
          },
          { origin: 'builtin' },
        )
        .then(
          (receipt) => {
            if (receipt.status !== 'done') memoryLog.warn({ receipt }, 'a memory upkeep task did not run');
          },
          // submit() answers with a receipt (a full queue is one); anything else is logged, not left unhandled.
          (error: unknown) => memoryLog.warn({ err: error }, 'a memory upkeep task was not queued'),
        );
      return true;
    },
    clock,
    log: memoryLog,
  });
  const memoryInput = (input: InputEvent): RecordedInput => ({
    id: input.id,
    timestamp: input.received_at,
    source: input.source,
    channel: input.channel,
    peer: typeof input.meta.peer === 'string' ? input.meta.peer : input.source,
    input: inputText(input),
    trust: input.sender.trust,
  });
  tools.addProvider({ owner: 'memory', tools: () => memory.tools() });
  // The media store knowledge attachments live in; plugins (the camera) store pictures there too.
  const media = new MediaStore({
    dir: join(paths.dataDir, 'media'),
    maxBytes: () => settings.config().core.knowledge.max_media_mb * 1024 * 1024,
  });
  const knowledge = new KnowledgeService({
    database: () => store.database('knowledge'),
    dataDir: paths.dataDir,
    media,
    // Memory's analyzer and embedder (an installed model when configured); memory starts first.
    analyzer: () => memory.parts().analyzer,
    embedder: () => memory.parts().embedder,
    settings: () => settings.config().core.knowledge,
    clock,
    log: logs.child('knowledge'),
  });
  // Snapshots and other pictures nothing refers to are removed in time (core.knowledge.media_*).
  const mediaUpkeep = new MediaUpkeep({
    media,
    referenced: () => knowledge.referencedMedia(),
    settings: () => settings.config().core.knowledge,
    clock,
    log: logs.child('media'),
  });
  // Files handed over for knowledge_attach / knowledge_import_dir: the model reads nothing else.
  const inboxDir = join(paths.dataDir, 'inbox');
  for (const definition of knowledgeTools(knowledge, {
    settings: () => settings.config().core.knowledge,
    sourceRoots: () => [inboxDir],
  }))
    tools.register(definition);
  // The home's entities: the one place device state is read and changed (docs/decisions/0004).
  const entities = new EntityRegistry({
    database: () => store.database('home'),
    events,
    log: logs.child('home'),
    clock,
    settings: () => settings.config().core.home,
  });
  for (const definition of entityTools(entities, { audit: (record) => logs.audit(record) })) tools.register(definition);
  const skills = new SkillLibrary();
  for (const definition of skills.tools()) tools.register(definition);
  // Lua adapters run in worker threads; the library is created once settings are loaded.
  let luaLibrary: LuaAdapterLibrary | undefined;
  const lua: Service = {
    name: 'lua',
    start: async () => {
      const llm = settings.config().core.llm;
      luaLibrary = new LuaAdapterLibrary({
        logger: logs.child('llm.lua'),
        time_limit_ms: llm.lua_time_limit_ms,
        memory_limit_bytes: llm.lua_memory_mb * 1024 * 1024,
        http_timeout_ms: llm.lua_http_timeout_ms,
        http_max_bytes: llm.lua_http_max_bytes,
      });
    },
    stop: async () => {
      await luaLibrary?.close();
      luaLibrary = undefined;
    },
  };
  const providers = new ProviderManager({
    config: () => settings.config().core.llm,
    createModel: createModelFactory({
      lua: (source) => {
        if (!luaLibrary) throw new HomeAgentError('HA_ERR_LUA_LOAD', 'the Lua runtime is not running');
        return luaModelFactory(luaLibrary)(source);
      },
    }),
    setCurrentSource: (name) => settings.set('core.llm.current_source', name, 'agent'),
    log: logs.child('llm'),
    clock,
  });
  for (const definition of providers.tools()) tools.register(definition);
  const agent = new Agent({
    model: providers,
    modelConfigured: () => providers.configured(),
    offlineText: () => OFFLINE_TEXT,
    tools: { specs: () => tools.specs(), executeBatch: (calls, options) => executor.executeBatch(calls, options) },
    stages,
    io: {
      channelFor: (input) => {
        // The self channel's answers are for the logs only.
        if (input.channel === SELF_CHANNEL) return undefined;
        const name = io.route(input);
        const channel = name === undefined ? undefined : io.channel(name);
        return channel && { name: channel.name, synchronous: channel.synchronous, description: channel.description };
      },
      send: (event) => io.send(event),
    },
    prompt: new PromptBuilder({
      persona: new Persona({
        file: () => settings.config().core.agent.persona_file || join(paths.dataDir, 'personal', 'personal.md'),
        defaultFile: join(PACKAGE_ROOT, 'config', 'persona.md'),
        log: agentLog,
      }),
      toolSummary: () => tools.summaryByOwner(),
      sections: [() => skills.promptIndex()],
    }),
    conversation: memory.conversation(),
    slots: async (input) => {
      const block = await memory.recallBlock(inputText(input), { inputId: input.id });
      return block === undefined ? { slots: {}, trust: 'owner' } : { slots: { document_recall: block.text }, trust: block.trust };
    },
    recordInput: (input) => memory.recordInput(memoryInput(input)),
    remember: (turn) =>
      memory.remember({ ...memoryInput(turn.input), input: turn.text, response: turn.answer, tools: turn.tools, trust: turn.trust }),
    confirmations,
    media,
    events,
    limits: () => {
      const { agent: a, llm } = settings.config().core;
      return {
        max_tool_turns: a.max_tool_turns,
        temperature: llm.temperature,
        max_tokens: llm.max_tokens,
        max_images_per_turn: a.max_images_per_turn,
      };
    },
    clock,
    log: agentLog,
    newId: randomUUID,
  });
  const scheduler = new InputScheduler({ runner: agent, limits: () => settings.config().core.agent, log: logs.child('scheduler'), clock });
  // Automations run on the device without the model (docs/automations.md).
  const automations = new AutomationEngine({
    entities,
    events,
    io: {
      notify: (channel, text, meta) => io.send({ id: randomUUID(), channel, type: 'text', payload: text, meta, created_at: clock.now() }),
      input: (channel, text, level, meta) => {
        void scheduler.submit(
          {
            id: randomUUID(),
            source: 'automation',
            channel,
            sender: AUTOMATION_SENDER,
            type: 'text',
            payload: text,
            meta,
            received_at: clock.now(),
            level,
          },
          { origin: 'builtin' },
        );
      },
    },
    database: () => store.database('home'),
    log: logs.child('automation'),
    clock: systemTimerClock,
    settings: () => settings.config().core.automations,
  });
  // Shopping and to-do lists, kept with the household's other durable state.
  const lists = new ListStore({ database: () => store.database('state'), settings: () => settings.config().core.lists, clock });
  for (const definition of listTools(lists)) tools.register(definition);
  registerListMethods(control, lists, { logs });
  // Commands and questions the device answers without the model (issue 11).
  const intents = createIntentEngine({
    entities,
    events,
    executeBatch: (calls, options) => executor.executeBatch(calls, options),
    hasTool: (name) => tools.get(name) !== undefined,
    channels: () => io.channels().map((c) => ({ name: c.name, audio: canCarry(c.capabilities, 'audio') })),
    send: (event) => io.send({ ...event, id: randomUUID(), created_at: clock.now() }),
    findList: (name) => lists.findList(name),
    settings: () => settings.config().core.intent,
    modelAvailable: () => providers.configured(),
    isMachineInput: (ctx) => ctx.input.source === 'automation' || ctx.input.channel === SELF_CHANNEL,
    now: () => clock.now(),
    log: logs.child('intent'),
  });
  // An automation's input trigger with a reply answers first; then the local intents. An
  // automation's own input is not matched again.
  stages.register('core', 'on_input', async (ctx) => {
    const { input } = ctx;
    if (input.type === 'text' && typeof input.payload === 'string' && input.source !== 'automation') {
      const { reply } = automations.handleInput({ text: input.payload, channel: input.channel, source: input.source });
      if (reply !== undefined) {
        ctx.response = reply;
        return;
      }
    }
    await intents.onInput(ctx);
  });
  stages.register('core', 'pre_action', intents.preAction);
  // After the plugins (their entities are the names the sentences know): checked-off items past
  // their keep time go, and the sentences compile in the background instead of on the first command.
  let listUpkeep: NodeJS.Timeout | undefined;
  const intentService: Service = {
    name: 'intent',
    start: async () => {
      // Upkeep that fails (a locked or damaged state.db) is logged; the lists keep working and it is tried again.
      const upkeep = () => {
        try {
          lists.maintain();
        } catch (error) {
          logs.child('lists').warn({ err: error }, 'old checked-off list items could not be cleared');
        }
      };
      upkeep();
      listUpkeep = setInterval(upkeep, LIST_UPKEEP_MS).unref();
      intents.recognizer.changed();
    },
    stop: async () => {
      clearInterval(listUpkeep);
      intents.close();
    },
  };

  const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
  const configSections = configSectionsOf(loaded);
  const plugins = new PluginHost({
    roots: [
      { dir: join(packageDir, 'plugins'), origin: 'shipped', skills: false },
      // Device drivers (gpio, i2c, ...) load like built-in plugins (docs/decisions/0004).
      { dir: join(packageDir, 'devices'), origin: 'shipped', skills: false },
      { dir: join(PACKAGE_ROOT, 'skills'), origin: 'shipped', skills: true },
      { dir: paths.installedPluginsDir, origin: 'installed', skills: true },
      { dir: paths.installedSkillsDir, origin: 'installed', skills: true },
    ],
    installDir: paths.installedPluginsDir,
    pluginDataDir: paths.pluginDataDir,
    dataDir: paths.dataDir,
    runtimeDir: paths.runtimeDir,
    database: () => store.database('state'),
    kernel: {
      settings,
      events,
      logs,
      control,
      io,
      scheduler,
      tools,
      stages,
      routes: new HttpRouteRegistry(),
      llm: providers,
      memory: memory.pluginMemory(),
      knowledge,
      media,
      entities,
      controlMethods: new PluginControlMethods(control),
      newId: randomUUID,
      now: () => clock.now(),
    },
    // The process and Lua runtimes load with the first plugin of their kind (most homes run none).
    drivers: {
      process: async (context) => (await import('./plugin/process/process-plugin.js')).createProcessPlugin(context),
      lua: async (context) => (await import('./plugin/lua/lua-plugin.js')).createLuaPlugin(context),
      skill: createSkillDriver(skills),
    },
    skillManifest,
    limits: () => settings.config().core.plugins,
    timeoutMs: () => settings.config().core.daemon.plugin_timeout_ms,
    configuredEnabled: (name) => {
      const section = (settings.config().plugin as Record<string, { enabled?: unknown } | undefined>)[name];
      return typeof section?.enabled === 'boolean' ? section.enabled : undefined;
    },
    // Sections of plugins the schema does not know: checked against their manifests (exit 78 at start).
    ...(configSections !== undefined && { configSections }),
  });
  registerPluginMethods(control, plugins, tracker.enabled ? (origin, run, options) => tracker.track(origin, run, options) : undefined);
  registerChangeMethods(control, tracker, { logs });
  const supervisor = new Supervisor({
    notifier,
    loop,
    stateDb: () => store.database('state').checkWritable(),
    llm: () =>
      resolveSources(settings.config().core.llm)
        .filter((s) => s.base_url !== '')
        .map((s) => ({ name: s.name, base_url: s.base_url })),
    devices: () =>
      entities
        .list()
        .filter((e) => e.state === 'unavailable')
        .map((e) => ({ id: e.entity_id, detail: typeof e.attributes.error === 'string' ? e.attributes.error : 'unavailable' })),
    plugins: {
      health: () => plugins.health(),
      restart: async (name, actor) => {
        await plugins.reload(name, actor);
      },
      folderOf: (name) => plugins.folderOf(name),
    },
    tracker: tracker.enabled ? tracker : undefined,
    startupRollbacks: () => tracker.startupRollbacks(),
    // The conversation that made the change (or core.supervisor.announce_channel), else the web
    // page's channel: the household's screen. The status notice and the log carry it in any case.
    // A channel that only answers its own requests (the CLI's) refuses the message: the next one
    // gets it.
    announce: async (text, channel) => {
      const targets = [...new Set([channel, 'webui'])].filter((name): name is string => !!name && io.channel(name) !== undefined);
      let refusal: unknown;
      for (const target of targets) {
        try {
          await io.send({ id: randomUUID(), channel: target, type: 'text', payload: text, meta: {}, created_at: clock.now() });
          return;
        } catch (error) {
          refusal = error;
        }
      }
      if (refusal !== undefined) throw refusal;
    },
    status,
    settings: () => ({ supervisor: settings.config().core.supervisor, tracker: settings.config().core.tracker }),
    events,
    log: supervisorLog,
    clock: systemTimerClock,
  });
  registerMemoryMethods(control, memory, { logs, clock });
  registerKnowledgeMethods(control, knowledge, { logs, media });
  registerEntityMethods(control, entities, { logs, now: () => clock.now() });
  registerAutomationMethods(control, automations, { logs });
  registerConfirmationMethods(control, {
    gate: confirmations,
    submit: (input) => scheduler.submit(input, { origin: 'builtin' }),
    notice: (message) => status.notice('warning', CONFIRMATION_NOTICE, message),
    clearNotice: () => status.clearNotice(CONFIRMATION_NOTICE),
    senderOf: callerSender,
    audit: (record) => logs.audit(record),
    events,
    clock,
  });
  const runner = new ServiceRunner({ events, log, stopTimeoutMs: () => settings.config().core.daemon.stop_timeout_ms });
  // Automations start once the device drivers (plugins) have registered their entities and stop
  // before them, so no run is left switching a device that is going to its safe state.
  // The tracker settles a trial a crash interrupted before any plugin loads; the supervisor starts
  // last (it checks what the others started) and so stops first.
  for (const service of [
    store,
    settings,
    tracker,
    lua,
    memory,
    knowledge,
    mediaUpkeep,
    entities,
    io,
    scheduler,
    plugins,
    intentService,
    automations,
    supervisor,
  ])
    runner.add(service);
  registerKernelMethods({
    control,
    settings,
    store,
    runner,
    plugins,
    status,
    health: () => supervisor.health(),
    logs,
    clock,
    paths: { ...paths, backupDir: () => resolvePaths({ ...loaded, config: settings.config() }).backupDir },
    llm: providers,
    scheduler,
    newId: randomUUID,
  });

  events.on('daemon', 'daemon.status', ({ text }) => notifier.status(text));
  events.on('daemon', 'agent.llm_chain', (round) => agentLog.debug(round, 'llm round'));
  events.on('daemon', 'settings.changed', ({ key }) => {
    if (key.startsWith('core.log.')) logs.setLevels(settings.config().core.log.level, settings.config().core.log.levels);
    if (key === 'core.automations.rules') {
      try {
        automations.reload();
      } catch (error) {
        log.error({ err: describeError(error) }, 'automation rules not reloaded: the rules running stay');
      }
    }
  });
  // Plugins' own notices (cmd: "cmd_run not isolated"), keyed plugin.<name>.<what>: never one of the
  // kernel's (plugin.<name> is the kernel's notice that the plugin failed).
  events.on('daemon', 'daemon.notice', ({ key, level, message }) => {
    if (!/^plugin\.[^.]+\.[^.]+/.test(key)) return;
    if (message === null) status.clearNotice(key);
    else status.notice(level, key, message);
  });
  events.on('daemon', 'service.state', ({ name, kind, state, error }) => {
    if (kind !== 'plugin') return;
    if (state === 'failed') status.notice('error', `plugin.${name}`, `plugin ${name} failed: ${error ?? 'unknown error'}`);
    else if (state === 'running') status.clearNotice(`plugin.${name}`);
  });

  // Shutdown: the first SIGTERM/SIGINT stops cleanly, a second one forces the exit.
  const shutdown = new AbortController();
  const shutdownRequested = new Promise<string>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (shutdown.signal.aborted) {
        log.warn({ signal }, 'second signal: exiting without waiting for services');
        process.exit(EXIT_CODES.FAILURE);
      }
      log.info({ signal }, 'shutdown requested');
      shutdown.abort();
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, 'uncaught exception: exiting so that systemd restarts HomeAgent');
    process.exit(EXIT_CODES.SOFTWARE);
  });
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled promise rejection: exiting so that systemd restarts HomeAgent');
    process.exit(EXIT_CODES.SOFTWARE);
  });

  notifier.status('Starting');
  try {
    await runner.startAll(shutdown.signal);
  } catch (error) {
    if (!shutdown.signal.aborted && isHomeAgentError(error, 'HA_ERR_CONFIG_INVALID')) {
      // The plugin host found a plugin section of the file that does not fit the plugin's manifest.
      log.fatal({ err: error }, 'refusing to start: the configuration is invalid');
      reportConfigProblems(error);
      notifier.status(`Failed: ${describeError(error)}`);
      lock.release();
      return EXIT_CODES.CONFIG;
    }
    if (!shutdown.signal.aborted) {
      log.fatal({ err: error }, 'start-up failed');
      process.stderr.write(`homeagent: start-up failed: ${describeError(error)}\n`);
      notifier.status(`Failed: ${describeError(error)}`);
      lock.release();
      return EXIT_CODES.SOFTWARE;
    }
  }

  if (!shutdown.signal.aborted) {
    logs.setLevels(settings.config().core.log.level, settings.config().core.log.levels);
    for (const db of store.status()) {
      if (db.recovered_from_corruption) {
        status.notice(
          'error',
          `store.${db.name}`,
          `${db.name} database was corrupt and was replaced by an empty one; the damaged file is kept at ${db.recovered_from_corruption.movedTo}`,
        );
      }
    }
    const socket = settings.config().plugin.cli.socket_path || join(paths.runtimeDir, 'homeagent.sock');
    status.running(`CLI at ${socket}`);
    supervisor.ready();
    notifier.ready(status.text());
    log.info({ socket, notify: notifier.backend }, `HomeAgent ready; CLI socket: ${socket}`);
  }

  const signal = await shutdownRequested;
  status.stopping();
  notifier.stopping(`Stopping (${signal})`);
  const stopTimeout = settings.config().core.daemon.stop_timeout_ms;
  // A service that ignores its own deadline must not keep the process alive.
  setTimeout(() => {
    log.error('shutdown took too long; exiting');
    process.exit(EXIT_CODES.FAILURE);
  }, stopTimeout + 1000).unref();
  const result = await runner.stopAll(stopTimeout);
  lock.release();
  if (!result.clean) log.error({ timed_out: result.timedOut, failed: result.failed }, 'stopped with problems');
  else log.info('stopped cleanly');
  return result.clean ? EXIT_CODES.OK : EXIT_CODES.FAILURE;
}

function restore(file: string | undefined, configFile: string | undefined): number {
  const boot = loadOrReport(configFile);
  if (!boot || file === undefined) return EXIT_CODES.CONFIG;
  const owner = runningOwner(boot.paths.pidFile);
  if (owner !== undefined) {
    process.stderr.write(`homeagent: the daemon is running (pid ${owner}); stop it first (systemctl stop homeagent)\n`);
    return EXIT_CODES.TEMP_FAIL;
  }
  try {
    const result = restoreDatabase(file, boot.paths.stateDb, systemClock);
    process.stdout.write(
      `restored ${result.restored} from ${file}${result.previousMovedTo ? `; the previous database is kept at ${result.previousMovedTo}` : ''}\n`,
    );
    return EXIT_CODES.OK;
  } catch (error) {
    process.stderr.write(`homeagent: ${describeError(error)}\n`);
    return error instanceof HomeAgentError ? EXIT_CODES.DATA_ERROR : EXIT_CODES.SOFTWARE;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`homeagent: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(EXIT_CODES.SOFTWARE);
  },
);
