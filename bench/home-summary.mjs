// The home summary in the agent's prompt (issue 29), measured in prompt characters:
// home_summary_chars: the [Home] block for a realistic home of 40 entities (rooms with lights,
//   switches, climate, sensors, doors, a lock, media, a vacuum, people, the weather; names in
//   English with Chinese aliases) and for 150, at the default budget (core.agent.home_summary_max_chars),
//   in English and in Chinese, with the entities shown and counted;
// home_summary_unbudgeted_chars: the 150-entity home without a budget, what the budget saves;
// system_prompt_chars: the daemon's own system prompt (persona, rules, skills, the tool summary of
//   every built-in tool), captured from a real in-process daemon by a loopback model server, plus the
//   summary block (the prompt builder joins blocks with one blank line).
// No goal is judged: these are sizes to watch. Real parts: the entity registry on a temporary
// home.db, the summary module, the daemon (dist/src/daemon.js).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quick } from './quick.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src');
const load = (path) => import(join(dist, path));

const AREAS = [
  { id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] },
  { id: 'living_room', name: 'Living room', aliases: ['客厅'] },
  { id: 'bedroom', name: 'Bedroom', aliases: ['卧室'] },
  { id: 'kids_room', name: 'Kids room', aliases: ['儿童房'] },
  { id: 'bathroom', name: 'Bathroom', aliases: ['浴室'] },
  { id: 'hallway', name: 'Hallway', aliases: ['走廊'] },
  { id: 'study', name: 'Study', aliases: ['书房'] },
  { id: 'garden', name: 'Garden', aliases: ['花园'] },
];

/** One room's usual devices; `zh` is the room's Chinese name for the aliases. */
function room(area, zh) {
  const id = area.id;
  return [
    {
      domain: 'light',
      object_id: `${id}_ceiling`,
      name: `${area.name} ceiling light`,
      aliases: [`${zh}吸顶灯`],
      area: id,
      initial_state: 'off',
    },
    {
      domain: 'sensor',
      object_id: `${id}_temperature`,
      name: `${area.name} temperature`,
      area: id,
      unit: '°C',
      device_class: 'temperature',
      initial_state: 21.4,
    },
    {
      domain: 'sensor',
      object_id: `${id}_humidity`,
      name: `${area.name} humidity`,
      area: id,
      unit: '%',
      device_class: 'humidity',
      initial_state: 48,
    },
    {
      domain: 'binary_sensor',
      object_id: `${id}_window`,
      name: `${area.name} window`,
      aliases: [`${zh}窗户`],
      area: id,
      device_class: 'window',
      initial_state: 'off',
    },
  ];
}

/** A realistic home: 8 rooms of 4, plus the whole-house devices (40 in all). */
function home40() {
  const zh = (area) => area.aliases[0];
  const entities = AREAS.flatMap((area) => room(area, zh(area)));
  entities.push(
    {
      domain: 'light',
      object_id: 'sofa_lamp',
      name: 'Sofa lamp',
      aliases: ['沙发灯'],
      area: 'living_room',
      initial_state: 'on',
      attributes: { brightness: 153 },
    },
    {
      domain: 'climate',
      object_id: 'thermostat',
      name: 'Thermostat',
      aliases: ['空调'],
      area: 'living_room',
      initial_state: 'heat',
      attributes: { current_temperature: 20.5, temperature: 21 },
    },
    {
      domain: 'media_player',
      object_id: 'tv',
      name: 'TV',
      aliases: ['电视'],
      area: 'living_room',
      initial_state: 'playing',
      attributes: { media_title: 'Evening news' },
    },
    {
      domain: 'cover',
      object_id: 'bedroom_blinds',
      name: 'Bedroom blinds',
      aliases: ['卧室窗帘'],
      area: 'bedroom',
      initial_state: 'open',
      attributes: { current_position: 60 },
    },
    { domain: 'lock', object_id: 'front_door', name: 'Front door lock', aliases: ['前门锁'], area: 'hallway', initial_state: 'locked' },
    {
      domain: 'binary_sensor',
      object_id: 'front_door',
      name: 'Front door',
      aliases: ['前门'],
      area: 'hallway',
      device_class: 'door',
      initial_state: 'off',
    },
    { domain: 'vacuum', object_id: 'robot', name: 'Robot vacuum', aliases: ['扫地机'], initial_state: 'docked' },
    { domain: 'person', object_id: 'anna', name: 'Anna', initial_state: 'home' },
  );
  return entities;
}

/** A big home: the 40, and more sensors, plugs and lights in every room (150 in all). */
function home150() {
  const entities = home40();
  let i = 0;
  while (entities.length < 150) {
    const area = AREAS[i % AREAS.length];
    const n = Math.floor(i / AREAS.length) + 1;
    const kind = i % 3;
    if (kind === 0)
      entities.push({
        domain: 'switch',
        object_id: `${area.id}_plug_${n}`,
        name: `${area.name} plug ${n}`,
        area: area.id,
        initial_state: 'off',
      });
    else if (kind === 1)
      entities.push({
        domain: 'sensor',
        object_id: `${area.id}_power_${n}`,
        name: `${area.name} power ${n}`,
        area: area.id,
        unit: 'W',
        device_class: 'power',
        initial_state: 12.5,
      });
    else
      entities.push({
        domain: 'light',
        object_id: `${area.id}_spot_${n}`,
        name: `${area.name} spot ${n}`,
        area: area.id,
        initial_state: 'on',
      });
    i++;
  }
  return entities;
}

async function registryWith(m, dir, definitions, name) {
  const logs = new m.LogManager({ level: 'silent', levels: {} });
  const database = m.ManagedDatabase.open(
    { name: 'home', file: join(dir, `${name}.db`), synchronous: 'NORMAL' },
    { busyTimeoutMs: 2000, startupCheck: 'off', log: logs.child('store'), clock: m.systemClock },
  );
  const settings = { ...m.defaultConfig().core.home, areas: AREAS };
  const registry = new m.EntityRegistry({
    database: () => database,
    events: new m.EventBus(logs.child('events')),
    log: logs.child('home'),
    clock: m.systemClock,
    settings: () => settings,
  });
  for (const definition of definitions) registry.register('plugin:bench', { ...definition, call: async () => {} });
  return { registry, close: () => database.close() };
}

/** The daemon's system prompt for one turn, as the model receives it (a home without entities: no summary). */
async function daemonPrompt(dir) {
  let system = '';
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      // The reachability probe sends no chat request: any answer will do.
      if (req.method !== 'POST' || raw === '') return void res.end('{}');
      const body = JSON.parse(raw);
      system = body.messages?.[0]?.role === 'system' ? body.messages[0].content : '';
      const chunk = {
        id: 'b',
        object: 'chat.completion.chunk',
        model: 'bench',
        choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }],
      };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { createDaemon } = await load('daemon.js');
  const config = join(dir, 'config.yaml');
  writeFileSync(config, '{}\n');
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOMEAGENT_CONFIG: config,
    HOMEAGENT_DATA_DIR: join(dir, 'daemon'),
    HOMEAGENT_PLUGIN_WEBUI_PORT: '0',
    HOMEAGENT_LLM_BASE_URL: `http://127.0.0.1:${server.address().port}`,
    HOMEAGENT_LLM_API_KEY: 'sk-bench',
    HOMEAGENT_LLM_MODEL: 'bench',
  };
  const daemon = createDaemon({ env, cwd: dir, logDestination: { write: () => {} } });
  try {
    await daemon.ready;
    await daemon.control.call(
      'agent.chat',
      { text: 'Write me a short poem about autumn leaves' },
      { actor: 'cli', owner: true, proof: 'bench' },
    );
    return system;
  } finally {
    await daemon.close('bench');
    server.close();
  }
}

export async function run(emit) {
  const [events, registry, store, logger, clock, config, summary] = await Promise.all([
    load('events/event-bus.js'),
    load('home/entity-registry.js'),
    load('store/database.js'),
    load('log/logger.js'),
    load('shared/clock.js'),
    load('config/loader.js'),
    load('home/home-summary.js'),
  ]);
  const m = {
    EventBus: events.EventBus,
    EntityRegistry: registry.EntityRegistry,
    ManagedDatabase: store.ManagedDatabase,
    LogManager: logger.LogManager,
    systemClock: clock.systemClock,
    defaultConfig: config.defaultConfig,
  };
  const budget = m.defaultConfig().core.agent.home_summary_max_chars;
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-summary-'));
  try {
    const base = await daemonPrompt(dir);
    const homes = quick
      ? [['home_40', home40()]]
      : [
          ['home_40', home40()],
          ['home_150', home150()],
        ];
    for (const [name, definitions] of homes) {
      const { registry: entities, close } = await registryWith(m, dir, definitions, name);
      try {
        for (const language of ['en', 'zh']) {
          const built = summary.homeSummary(entities.list(), entities.areas(), { max_chars: budget, language, now: Date.now() });
          const chars = built?.text.length ?? 0;
          emit({
            name: 'home_summary_chars',
            unit: 'chars',
            value: chars,
            n: definitions.length,
            home: name,
            language,
            budget,
            shown: built?.shown ?? 0,
            total: built?.total ?? 0,
          });
          emit({
            name: 'system_prompt_chars',
            unit: 'chars',
            value: base.length + (chars > 0 ? 2 + chars : 0),
            n: definitions.length,
            home: name,
            language,
            without_summary: base.length,
            summary: chars,
          });
        }
        if (definitions.length > 40) {
          const whole = summary.homeSummary(entities.list(), entities.areas(), { max_chars: 1_000_000, language: 'en', now: Date.now() });
          emit({
            name: 'home_summary_unbudgeted_chars',
            unit: 'chars',
            value: whole?.text.length ?? 0,
            n: definitions.length,
            home: name,
            shown: whole?.shown ?? 0,
          });
        }
      } finally {
        close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
