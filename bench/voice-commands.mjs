// Spoken commands offline (issue 30 point 5), on the real path: an audio stream → the Silero voice
// activity detector → the voice pipeline → the local recogniser (pocketsphinx with the home's
// command grammar, exactly as the plugin builds it) → the intent engine's on_input hook → the
// entity registry's call handler. The commands are the held-out set of
// test/fixtures/voice-commands/ (216 texts and their home, written before the recogniser was
// tuned and never tuned on); espeak-ng says each in a seeded voice, speed and pitch, sox adds a
// room (reverb) and pink noise at 20 or 10 dB SNR. Nothing is downloaded or committed.
//   voice_commands_right_{clean,20db,10db}: % of commands with the right action on the right
//     target (a "none" line is right when nothing was switched) — goals 20 dB ≥ 95, 10 dB ≥ 85
//   voice_commands_wrong_{clean,20db,10db}: % with an action that was not asked for (goal ≤ 1)
//   voice_commands_text_right: the same texts typed, the intent engine's own ceiling
//   voice_command_to_action_p95: from the voice activity detector's utterance event to the
//     device's call handler (goal ≤ 500 ms); the detector's min_silence_ms comes before it
//   voice_grammar: the grammar's size, build and first-decode time; voice_decoder_rss: the
//     decoder process's resident memory with the grammar loaded, idle.
// Quick mode uses 12 commands and the 20 dB condition only.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quick, size } from './quick.mjs';
import { round, spread } from './stats.mjs';
import { random } from './wake-word-data.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const load = (path) => import(join(dist, path));
const FIXTURE = join(root, 'test/fixtures/voice-commands');
const RATE = 16000;
const COUNT = size(Number.POSITIVE_INFINITY, 12);
const VOICES = process.env.VOICE_BENCH_VOICES?.split(',') ?? [
  'en-us',
  'en-us+m3',
  'en-us+f2',
  'en',
  'en-gb',
  'en-us+m7',
  'en-us+f4',
  'en-gb-x-rp',
  'en-029',
  'en-us+m1',
];
const ALL_CONDITIONS = [
  { name: 'clean', snr: undefined, room: false },
  { name: 'room', snr: undefined, room: true },
  { name: '20db_dry', snr: 20, room: false },
  { name: '20db', snr: 20, room: true },
  { name: '10db', snr: 10, room: true },
];
const CONDITIONS = ALL_CONDITIONS.filter((c) => (quick ? c.name === '20db' : c.name !== 'room' && c.name !== '20db_dry'));
// VOICE_BENCH_CONDITIONS=clean,20db picks some (for looking into one).
const PICKED = process.env.VOICE_BENCH_CONDITIONS?.split(',');
const RUN_CONDITIONS = PICKED ? ALL_CONDITIONS.filter((c) => PICKED.includes(c.name)) : CONDITIONS;
const GOALS = { clean: undefined, '20db': 95, '10db': 85 };
const BIG = { maxBuffer: 256 * 1024 * 1024 };
const RAW = ['-t', 'raw', '-r', String(RATE), '-c', '1', '-b', '16', '-e', 'signed'];

/** The held-out set, or the tuning set with VOICE_BENCH_SET=tune (the only one to tune on). */
const SET = process.env.VOICE_BENCH_SET === 'tune' ? 'tune' : 'heldout';

function commands() {
  const lines = readFileSync(join(FIXTURE, SET === 'tune' ? 'tune.txt' : 'commands.txt'), 'utf8').split('\n');
  return lines
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [text, expected, value] = line.split('|').map((part) => part.trim());
      if (expected === 'none') return { text, expected: undefined };
      const [service, targets] = expected.split(' ');
      return { text, expected: { service, targets: targets.split(',').sort(), value: value || undefined } };
    })
    .slice(0, COUNT);
}

const toSamples = (buffer) => new Int16Array(buffer.buffer, buffer.byteOffset, Math.floor(buffer.byteLength / 2));

/** espeak-ng speech, in a room when asked (sox reverb), at 16 kHz. */
function speech(text, voice, room) {
  const wav = execFileSync('espeak-ng', ['-v', voice.voice, '-s', String(voice.speed), '-p', String(voice.pitch), '--stdout', text], BIG);
  const effects = room ? ['reverb', '40', '50', '60', '100', '0', '0'] : [];
  return toSamples(execFileSync('sox', ['-t', 'wav', '-', ...RAW, '-', ...effects], { input: wav, ...BIG }));
}

function rms(samples) {
  let sum = 0;
  let n = 0;
  for (const s of samples) {
    // Speech only: espeak's silences would lower the level the SNR is set against.
    if (Math.abs(s) > 200) {
      sum += s * s;
      n++;
    }
  }
  return Math.sqrt(sum / Math.max(1, n));
}

/** 0.6 s lead, the speech, 1.4 s tail, with pink noise at the SNR under all of it. */
function scene(voiceSamples, snr, seed) {
  const lead = Math.round(0.6 * RATE);
  const out = new Int16Array(lead + voiceSamples.length + Math.round(1.4 * RATE));
  let noise = new Int16Array(out.length);
  if (snr !== undefined) {
    const raw = toSamples(
      execFileSync('sox', ['-n', ...RAW, '-', 'synth', (out.length / RATE).toFixed(3), 'pinknoise', 'vol', '0.1'], {
        ...BIG,
      }),
    );
    const scale = rms(voiceSamples) / 10 ** (snr / 20) / Math.max(1, Math.sqrt(raw.reduce((a, s) => a + s * s, 0) / raw.length));
    noise = Int16Array.from(raw, (s) => Math.round(s * scale));
    // Different noise per command: start at a seeded offset.
    const shift = seed % noise.length;
    noise = Int16Array.from(noise, (_, i) => noise[(i + shift) % noise.length]);
  }
  for (let i = 0; i < out.length; i++) {
    const v = i >= lead && i < lead + voiceSamples.length ? voiceSamples[i - lead] : 0;
    out[i] = Math.max(-32768, Math.min(32767, v + noise[i]));
  }
  return out;
}

async function home(logs, events, clock, dir) {
  const [{ ManagedDatabase }, { EntityRegistry }] = await Promise.all([load('src/store/database.js'), load('src/home/entity-registry.js')]);
  const database = ManagedDatabase.open(
    { name: 'home', file: join(dir, 'home.db'), synchronous: 'NORMAL' },
    { busyTimeoutMs: 2000, startupCheck: 'off', log: logs.child('store'), clock },
  );
  const fixture = JSON.parse(readFileSync(join(FIXTURE, 'home.json'), 'utf8'));
  const slug = (name) => name.toLowerCase().replaceAll(' ', '_');
  const registry = new EntityRegistry({
    database: () => database,
    events,
    log: logs.child('home'),
    clock,
    settings: () => ({
      areas: fixture.areas.map((area) => ({ id: slug(area.name), name: area.name, aliases: area.aliases })),
      history_raw_days: 7,
      history_days: 365,
      history_period_minutes: 60,
      history_max_rows: 1_000_000,
      maintenance_interval_ms: 3_600_000,
    }),
  });
  await registry.start(new AbortController().signal);
  const calls = [];
  for (const entity of fixture.entities) {
    const [domain, objectId] = entity.id.split('.');
    const handle = registry.register('plugin:bench', {
      domain,
      object_id: objectId,
      name: entity.name,
      aliases: entity.aliases ?? [],
      area: slug(entity.area),
      ...(entity.device_class !== undefined && { device_class: entity.device_class }),
      initial_state: 'off',
      call: async (service, data) => {
        calls.push({ id: handle.entity_id, service, data: data ?? {}, at: performance.now() });
        handle.update(service === 'turn_off' ? 'off' : 'on');
      },
    });
  }
  return { registry, calls, database };
}

async function intentEngine(registry, events, logs) {
  const [{ ToolRegistry }, { StageRegistry }, { ToolExecutor }, { ConfirmationGate }, { entityTools }, { createIntentEngine }] =
    await Promise.all([
      load('src/agent/tool-registry.js'),
      load('src/agent/stage-registry.js'),
      load('src/agent/tool-executor.js'),
      load('src/agent/confirmation-gate.js'),
      load('src/home/entity-tools.js'),
      load('src/intent/intent-engine.js'),
    ]);
  const tools = new ToolRegistry({ log: logs.child('tools') });
  for (const definition of entityTools(registry)) tools.register(definition);
  const executor = new ToolExecutor({
    registry: tools,
    stages: new StageRegistry(logs.child('stages')),
    gate: new ConfirmationGate({ preauthorized: () => [], ttlMs: () => 300_000, now: () => Date.now() }),
    limits: () => ({ tool_timeout_ms: 30_000, tool_output_max_chars: 20_000, max_parallel_tools: 4 }),
    log: logs.child('tools'),
  });
  const engine = createIntentEngine({
    entities: registry,
    events,
    executeBatch: (calls, options) => executor.executeBatch(calls, options),
    hasTool: (name) => tools.get(name) !== undefined,
    channels: () => [],
    send: async () => {},
    findList: () => undefined,
    settings: () => ({
      enabled: true,
      min_confidence: 0.85,
      near_min_similarity: 0.6,
      followup_quiet_s: 120,
      recompile_delay_ms: 1000,
      weather_entity: '',
      broadcast_channels: [],
      source_areas: [],
    }),
    modelAvailable: () => false,
    isMachineInput: () => false,
    now: () => Date.now(),
    log: logs.child('intent'),
  });
  engine.recognizer.current();
  return engine;
}

/** right: exactly the asked calls (or none for a "none" line); wrong: any call not asked for. */
function judge(command, calls) {
  const { expected } = command;
  if (!expected) return calls.length === 0 ? 'right' : 'wrong';
  if (calls.length === 0) return 'missed';
  const ids = [...new Set(calls.map((c) => c.id))].sort();
  const valueOk = (call) => {
    const v = expected.value;
    if (v === undefined) return call.data.brightness === undefined && call.data.color_name === undefined;
    if (/^\d+$/.test(v)) {
      const n = Number(v);
      if (expected.service === 'set_temperature') return call.data.temperature === n;
      return call.data.brightness === Math.round((n * 255) / 100);
    }
    return call.data.color_name === v;
  };
  const same = ids.join(',') === expected.targets.join(',') && calls.every((c) => c.service === expected.service && valueOk(c));
  return same ? 'right' : 'wrong';
}

function rssKb(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Number(line?.split(/\s+/)[1] ?? 0);
  } catch {
    return 0;
  }
}

export async function run(emit) {
  try {
    execFileSync('pocketsphinx_continuous', ['-h'], { stdio: 'ignore' });
  } catch (error) {
    if (error.code === 'ENOENT') {
      emit({
        name: 'voice_commands_skipped',
        unit: 'none',
        value: 0,
        why: 'pocketsphinx is not installed (apt-get install pocketsphinx pocketsphinx-en-us)',
      });
      return;
    }
  }
  const [{ LogManager }, { EventBus }, { newStageContext }, { VoiceActivityDetector }, { DEFAULT_VAD_SETTINGS }] = await Promise.all([
    load('src/log/logger.js'),
    load('src/events/event-bus.js'),
    load('src/agent/agent.js'),
    load('plugins/voice/vad/voice-activity-detector.js'),
    load('plugins/voice/vad/speech-segmenter.js'),
  ]);
  const [
    { LocalGrammar },
    { PocketsphinxStt, DEFAULT_MODEL_DIR, checkLocalModel },
    { OfflineFirstStt },
    { VoicePipeline },
    { ActivationPolicy },
    { spokenLanguage },
  ] = await Promise.all([
    load('plugins/voice/stt/local-grammar.js'),
    load('plugins/voice/stt/pocketsphinx-stt.js'),
    load('plugins/voice/stt/offline-first-stt.js'),
    load('plugins/voice/voice-pipeline.js'),
    load('plugins/voice/activation-policy.js'),
    load('plugins/voice/spoken-text.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-voice-commands-'));
  const logs = new LogManager({ level: 'silent', levels: {} });
  const clock = { now: () => Date.now(), monotonic: () => performance.now() };
  const events = new EventBus(logs.child('events'));
  const { registry, calls, database } = await home(logs, events, clock, dir);
  const engine = await intentEngine(registry, events, logs);
  const list = commands();
  let seq = 0;
  const runText = async (text) => {
    const input = {
      id: `in-${++seq}`,
      source: 'voice',
      channel: 'voice',
      // As the voice plugin sends it: anyone in the room, not the owner.
      sender: { trust: 'household', id: 'voice', proof: 'a voice heard through the microphone (push_to_talk)', shared: true },
      type: 'text',
      payload: text,
      meta: { language: 'en', activation: 'push_to_talk' },
      received_at: Date.now(),
      level: 0,
    };
    await engine.onInput(newStageContext(`task-${seq}`, input));
  };

  // The typed ceiling: the same texts straight into the intent engine.
  let textRight = 0;
  const textMisses = [];
  for (const command of list) {
    calls.length = 0;
    await runText(command.text);
    const verdict = judge(command, calls);
    if (verdict === 'right') textRight++;
    else textMisses.push(`${command.text} (${verdict})`);
  }
  emit({ name: 'voice_commands_text_right', unit: '%', value: round((100 * textRight) / list.length), n: list.length, misses: textMisses });

  // plugin.voice.stt's defaults (settings-schema.ts), as the plugin builds its grammar.
  const { settingsSchema } = await load('plugins/voice/settings-schema.js');
  const sttDefaults = Object.fromEntries(Object.entries(settingsSchema.properties.stt.properties).map(([k, v]) => [k, v.default]));
  const model = checkLocalModel(DEFAULT_MODEL_DIR);
  if (!model.ok) throw new Error(model.why);
  const grammar = new LocalGrammar({
    dir: join(dir, 'grammar'),
    dictionary: model.files.dict,
    entities: async () => registry.list(),
    areas: async () => registry.areas(),
    wakePhrases: () => ['hey home', 'hi home', 'ok home', 'hello home'],
    maxStates: () => 200_000,
    // The plugin's defaults unless the tuning run asks for others.
    maxAlternatives: () => Number(process.env.VOICE_BENCH_ALTERNATIVES ?? sttDefaults.local_max_alternatives),
    maxTemplatesPerGroup: () => Number(process.env.VOICE_BENCH_TEMPLATES ?? sttDefaults.local_max_templates_per_group),
    log: logs.child('voice'),
  });
  const heapBefore = process.memoryUsage().heapUsed;
  await grammar.path();
  const report = grammar.report();
  const decoder = new PocketsphinxStt({
    program: model.program,
    model: model.files,
    grammar: () => grammar.files(),
    timeoutMs: 30_000,
  });
  const stt = new OfflineFirstStt(decoder, () => undefined);
  let now = Date.now();
  const policy = new ActivationPolicy({
    now: () => now,
    settings: () => ({ listenWindowMs: 8000, refractoryMs: 0, wakePhrases: true }),
    record: () => {},
  });
  const said = [];
  let heard = '';
  const pipeline = new VoicePipeline({
    now: () => now,
    policy,
    stt: () => ({
      name: 'local',
      transcribe: async (audio, o) => {
        const result = await stt.transcribe(audio, o);
        heard = result.text;
        return result;
      },
    }),
    speaker: { active: false, say: async (text) => said.push(text), interrupt: () => false },
    bargeIn: () => false,
    wakePhrases: () => ['hey home'],
    matchWakePhrase: () => undefined,
    spokenLanguage,
    languageHint: () => undefined,
    command: ({ command }) => runText(command),
    log: logs.child('voice'),
  });
  // The decoder is the process of ours whose command line names this run's grammar.
  const decoderPid = async () => {
    const path = await grammar.path();
    try {
      const pids = execFileSync('pgrep', ['-f', path], { encoding: 'utf8' }).trim().split('\n');
      return pids.find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('pocketsphinx')) ?? '';
    } catch {
      return '';
    }
  };

  let utterance;
  const vad = await VoiceActivityDetector.open({
    sampleRate: RATE,
    settings: () => DEFAULT_VAD_SETTINGS,
    events: { onSpeechStart() {}, onUtterance: (u) => (utterance = { u, at: performance.now() }), onError() {} },
  });
  let firstDecodeMs;
  try {
    for (const condition of RUN_CONDITIONS) {
      const rand = random(condition.name.length * 7919 + 30);
      const tally = { right: 0, wrong: 0, missed: 0 };
      const latencies = [];
      const wrongs = [];
      const misses = [];
      for (const command of list) {
        const voice = {
          voice: VOICES[Math.floor(rand() * VOICES.length)],
          speed: 130 + Math.floor(rand() * 50),
          pitch: 30 + Math.floor(rand() * 40),
        };
        const audio = scene(speech(command.text, voice, condition.room), condition.snr, Math.floor(rand() * 1e9));
        vad.reset();
        utterance = undefined;
        // In 100 ms pieces as the microphone delivers them, but as fast as the detector takes them.
        for (let at = 0; at < audio.length; at += RATE / 10) vad.push(audio.subarray(at, at + RATE / 10));
        await vad.flush();
        calls.length = 0;
        heard = '';
        let verdict = 'missed';
        if (utterance) {
          now += 10_000;
          policy.trigger('push_to_talk');
          now += 50;
          pipeline.speechStarted();
          const started = performance.now();
          // As the plugin does: the utterance as the detector cut it.
          await pipeline.utterance(utterance.u);
          // The intent engine's call may still be on its way after the pipeline handed the command over.
          for (let i = 0; i < 200 && calls.length === 0 && command.expected && heard !== ''; i++)
            await new Promise((r) => setTimeout(r, 5));
          await new Promise((r) => setTimeout(r, 5));
          if (firstDecodeMs === undefined) firstDecodeMs = performance.now() - started;
          else if (calls.length > 0) latencies.push(calls[0].at - started);
          verdict = judge(command, calls);
        }
        tally[verdict]++;
        if (verdict === 'wrong') wrongs.push(`${command.text} → "${heard}" → ${calls.map((c) => `${c.service} ${c.id}`).join(', ')}`);
        if (verdict === 'missed') misses.push(`${command.text} → "${heard}"`);
      }
      const n = list.length;
      const goal = GOALS[condition.name];
      emit({
        name: `voice_commands_right_${condition.name}`,
        unit: '%',
        set: SET,
        value: round((100 * tally.right) / n),
        n,
        missed: tally.missed,
        ...(goal !== undefined ? { goal: `>= ${goal}`, goal_met: (100 * tally.right) / n >= goal } : {}),
        misses: misses.slice(0, 40),
      });
      emit({
        name: `voice_commands_wrong_${condition.name}`,
        unit: '%',
        set: SET,
        value: round((100 * tally.wrong) / n),
        n,
        goal: '<= 1',
        goal_met: (100 * tally.wrong) / n <= 1,
        wrongs,
      });
      if (latencies.length > 0) {
        const s = spread(latencies, [50, 95]);
        emit({
          name: `voice_command_to_action_p95_${condition.name}`,
          unit: 'ms',
          value: s.p95,
          n: latencies.length,
          ...s,
          vad_min_silence_ms: DEFAULT_VAD_SETTINGS.min_silence_ms,
          goal: '<= 500',
          goal_met: s.p95 <= 500,
        });
      }
    }
    await new Promise((r) => setTimeout(r, 1500));
    const pid = await decoderPid();
    emit({
      name: 'voice_grammar',
      unit: 'states',
      value: report.states,
      transitions: report.transitions,
      bytes: report.bytes,
      templates: report.templates,
      build_ms: report.build_ms,
      first_decode_ms: round(firstDecodeMs ?? 0),
      grammar_heap_mb: round((process.memoryUsage().heapUsed - heapBefore) / 1048576),
    });
    emit({ name: 'voice_decoder_rss', unit: 'MB', value: round(rssKb(pid) / 1024), pid_found: pid !== '' });
  } finally {
    await vad.close();
    await decoder.close();
    grammar.close();
    database.close?.();
    rmSync(dir, { recursive: true, force: true });
  }
}
