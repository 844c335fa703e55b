/**
 * The offline command recogniser (issue 30): the grammar built from the intent engine's sentences
 * and the home's names (dictionary filtering, names, rebuilding when the home changes), the real
 * pocketsphinx decoder on espeak-ng speech made here, the fallback to an open back end and the
 * offline answer in both languages.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { ActivationPolicy } from '../../../../plugins/voice/activation-policy.js';
import type { SpeechToText, Utterance } from '../../../../plugins/voice/speech.js';
import { spokenLanguage } from '../../../../plugins/voice/spoken-text.js';
import { buildCommandGrammar } from '../../../../plugins/voice/stt/command-grammar.js';
import { dictionaryWords, LocalGrammar } from '../../../../plugins/voice/stt/local-grammar.js';
import { OFFLINE_ONLY, OfflineFirstStt } from '../../../../plugins/voice/stt/offline-first-stt.js';
import {
  checkLocalModel,
  DEFAULT_MODEL_DIR,
  type LocalModelFiles,
  locateModel,
  PocketsphinxStt,
} from '../../../../plugins/voice/stt/pocketsphinx-stt.js';
import { OFFLINE_ANSWER, VoicePipeline } from '../../../../plugins/voice/voice-pipeline.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { silentLogs } from '../../fixtures/support.js';

/** Whether the FSG text accepts the words (a walk over its transitions, empty ones included). */
function accepts(fsg: string, sentence: string): boolean {
  const arcs = new Map<number, Array<{ to: number; word?: string }>>();
  let final = -1;
  for (const line of fsg.split('\n')) {
    const parts = line.split(' ');
    if (parts[0] === 'FINAL_STATE') final = Number(parts[1]);
    if (parts[0] !== 'TRANSITION') continue;
    const from = Number(parts[1]);
    arcs.set(from, [...(arcs.get(from) ?? []), { to: Number(parts[2]), ...(parts[4] ? { word: parts[4] } : {}) }]);
  }
  const close = (states: Set<number>): Set<number> => {
    const stack = [...states];
    while (stack.length > 0) {
      for (const arc of arcs.get(stack.pop() as number) ?? []) {
        if (arc.word === undefined && !states.has(arc.to)) {
          states.add(arc.to);
          stack.push(arc.to);
        }
      }
    }
    return states;
  };
  let at = close(new Set([0]));
  for (const word of sentence.split(' ')) {
    const next = new Set<number>();
    for (const state of at) for (const arc of arcs.get(state) ?? []) if (arc.word === word) next.add(arc.to);
    at = close(next);
  }
  return at.has(final);
}

const SENTENCES = [
  { intent: 'HassTurnOn', language: 'en', templates: ['[please ](turn|switch) on [the ]{name}', 'set [the ]{name} to {brightness}'] },
  { intent: 'HassTurnOff', language: 'en', templates: ['turn off [the ]{area} lights', 'zorbify {name}'] },
  { intent: 'HassShoppingListAddItem', language: 'en', templates: ['add {item} to my shopping list'] },
  { intent: 'HassTurnOn', language: 'zh', templates: ['打开{name}'] },
];
const DICTIONARY = new Set(
  'please turn switch on off the set to percent kitchen light lamp desk lights bedroom hey home fifty five twenty'.split(' '),
);

t.test('the grammar: the templates with the home names, words the dictionary lacks left out', async (t) => {
  const grammar = buildCommandGrammar({
    sentences: SENTENCES,
    home: {
      entities: [
        { name: 'Kitchen Light', aliases: ['desk lamp'] },
        { name: 'Flurbo Lamp', aliases: [] },
      ],
      areas: [{ name: 'Bedroom', aliases: [] }],
    },
    dictionary: DICTIONARY,
    colours: ['red'],
    wakePhrases: ['hey home', '小宅'],
  });
  t.ok(accepts(grammar.fsg, 'turn on the kitchen light'));
  t.ok(accepts(grammar.fsg, 'please switch on desk lamp'), 'an alias is a name');
  t.ok(accepts(grammar.fsg, 'hey home turn on kitchen light'), 'a wake phrase may come first');
  t.ok(accepts(grammar.fsg, 'set the kitchen light to fifty five percent'), 'numbers are number words');
  t.ok(accepts(grammar.fsg, 'turn off bedroom lights'));
  t.notOk(accepts(grammar.fsg, 'turn on the flurbo lamp'), 'a name with a word the dictionary lacks cannot be said');
  t.notOk(accepts(grammar.fsg, 'turn on the'), 'only whole sentences');
  t.same(grammar.missingNames, ['Flurbo Lamp']);
  t.ok(grammar.missingWords.includes('zorbify') && grammar.missingWords.includes('flurbo'));
  t.equal(grammar.templates, 3, 'free text, a missing word and Chinese templates are left out');
  t.equal(grammar.skippedTemplates, 2);
});

t.test('the grammar leaves out devices the home lacks and keeps the first options of a choice', async (t) => {
  const sentences = [
    {
      intent: 'HassTurnOn',
      language: 'en',
      templates: ['(turn|switch|power) on [the ]{name}', 'light up [the ]{area}'],
      slots: { domain: 'light' },
    },
    { intent: 'HassTurnOn', language: 'en', templates: ['open [the ]{name}'], slots: { domain: 'cover', device_class: 'garage' } },
    { intent: 'HassVacuumStart', language: 'en', templates: ['start [the ]{name}'] },
  ];
  const dictionary = new Set([...DICTIONARY, 'power', 'up', 'open', 'start', 'garage', 'door']);
  const home = {
    entities: [
      { name: 'Kitchen Light', aliases: [], domain: 'light' },
      { name: 'Garage Door', aliases: [], domain: 'cover', device_class: 'blind' },
    ],
    areas: [{ name: 'Bedroom', aliases: [] }],
  };
  const grammar = buildCommandGrammar({ sentences, home, dictionary, colours: [], maxAlternatives: 2, maxTemplatesPerGroup: 1 });
  t.ok(accepts(grammar.fsg, 'switch on the kitchen light'));
  t.notOk(accepts(grammar.fsg, 'power on the kitchen light'), 'the third option of a choice is cut');
  t.notOk(accepts(grammar.fsg, 'light up the bedroom'), 'the second template of a group is cut');
  t.notOk(accepts(grammar.fsg, 'open the garage door'), 'no garage-class cover in the home');
  t.notOk(accepts(grammar.fsg, 'start the kitchen light'), 'no vacuum in the home');
  const all = buildCommandGrammar({
    sentences,
    home: { ...home, entities: home.entities.map((e) => ({ ...e, device_class: 'garage' })) },
    dictionary,
    colours: [],
  });
  t.ok(
    accepts(all.fsg, 'power on the kitchen light') && accepts(all.fsg, 'light up the bedroom') && accepts(all.fsg, 'open the garage door'),
  );
});

t.test('the grammar file follows the home: a new entity is heard after the rebuild', async (t) => {
  const dir = t.testdir({ model: { 'cmudict-en-us.dict': [...DICTIONARY, 'fan', 'zebra'].map((w) => `${w} X`).join('\n') } });
  const entities = [{ name: 'Kitchen Light', aliases: [] as string[] }];
  const grammar = new LocalGrammar({
    dir: `${dir}/grammar`,
    dictionary: `${dir}/model/cmudict-en-us.dict`,
    entities: async () => entities as never,
    areas: async () => [],
    wakePhrases: () => [],
    maxStates: () => 100_000,
    log: silentLogs().child('voice'),
  });
  t.teardown(() => grammar.close());
  const first = await grammar.path();
  t.notOk(accepts(readFileSync(first, 'utf8'), 'turn on the bedroom fan'));
  entities.push({ name: 'Bedroom Fan', aliases: [] });
  grammar.changed(1);
  let second = first;
  while (second === first) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    second = await grammar.path();
  }
  t.ok(accepts(readFileSync(second, 'utf8'), 'turn on the bedroom fan'));
  t.match(grammar.report(), { path: second, states: Number, transitions: Number });
  const words = readFileSync((await grammar.files()).dict, 'utf8')
    .trim()
    .split('\n');
  t.ok(words.includes('fan X') && !words.includes('zebra X'), "the decoder's dictionary holds the grammar's words only");
});

t.test('dictionary words leave out alternate pronunciations', async (t) => {
  t.same([...dictionaryWords('light L AY T\nlight(2) L AY\nlamp L AE M P\n')], ['light', 'lamp']);
});

t.test('a pocketsphinx-format model directory: its acoustic model and dictionary are found, or named as missing', async (t) => {
  const dir = t.testdir({
    debian: { 'en-us': { mdef: 'x', 'feat.params': 'x' }, 'cmudict-en-us.dict': 'a AH' },
    flat: { mdef: 'x', 'feat.params': 'x', 'de.dict': 'hallo HH AA L OW' },
    empty: { 'README.txt': 'nothing' },
  });
  t.same(locateModel(`${dir}/debian`), { hmm: `${dir}/debian/en-us`, dict: `${dir}/debian/cmudict-en-us.dict` });
  t.same(locateModel(`${dir}/flat`), { hmm: `${dir}/flat`, dict: `${dir}/flat/de.dict` });
  t.same(locateModel(`${dir}/missing`), {});
  const check = checkLocalModel(`${dir}/empty`, process.execPath);
  t.equal(check.ok, false);
  t.match(check.why, /no acoustic model \(mdef, feat.params\), no pronunciation dictionary/);
  t.match(checkLocalModel(`${dir}/debian`, '/nonexistent/pocketsphinx_continuous'), {
    ok: false,
    why: /is not installed \(apt-get install pocketsphinx pocketsphinx-en-us\)/,
    whyZh: /没有安装/,
  });
});

const fake = (name: string, text: string): SpeechToText => ({ name, transcribe: async () => ({ text, language: 'en' }) });
const AUDIO = { samples: new Int16Array(1600), sampleRate: 16000 };

t.test('an utterance outside the grammar goes to the open back end, else it is refused as offline only', async (t) => {
  t.match(await new OfflineFirstStt(fake('local', 'turn on the light'), () => fake('wyoming', 'x')).transcribe(AUDIO, {}), {
    text: 'turn on the light',
  });
  const withFallback = new OfflineFirstStt(fake('local', ''), () => fake('wyoming', 'what is the capital of france'));
  t.match(await withFallback.transcribe(AUDIO, {}), { text: 'what is the capital of france' });
  t.equal(withFallback.name, 'local+wyoming');
  await t.rejects(new OfflineFirstStt(fake('local', ''), () => undefined).transcribe(AUDIO, {}), { code: OFFLINE_ONLY });
});

for (const [language, hint] of [
  ['en', undefined],
  ['zh', 'zh'],
] as const) {
  t.test(`the offline answer after push-to-talk, in ${language}`, async (t) => {
    let now = 1_000_000;
    const policy = new ActivationPolicy({
      now: () => now,
      settings: () => ({ listenWindowMs: 8000, refractoryMs: 0, wakePhrases: true }),
      record: () => {},
    });
    const said: string[] = [];
    const stt: SpeechToText = {
      name: 'local',
      transcribe: async () => {
        throw new HomeAgentError(OFFLINE_ONLY as never, 'no home command');
      },
    };
    const pipeline = new VoicePipeline({
      now: () => now,
      policy,
      stt: () => stt,
      speaker: { active: false, say: async (text) => said.push(text), interrupt: () => false },
      bargeIn: () => true,
      wakePhrases: () => ['hey home'],
      matchWakePhrase: () => undefined,
      spokenLanguage,
      languageHint: () => hint,
      command: async () => {},
      log: silentLogs().child('voice'),
    });
    policy.trigger('push_to_talk');
    now += 1000;
    pipeline.speechStarted();
    now += 100;
    const utterance: Utterance = { ...AUDIO, speechStartMs: 0, speechEndMs: 100, truncated: false };
    await pipeline.utterance(utterance);
    t.same(said, [OFFLINE_ANSWER[language]]);
    t.equal(pipeline.stats().stt_failures, 0, 'talk that is no command is not a failure');
  });
}

const local = checkLocalModel(DEFAULT_MODEL_DIR);
const espeak = (() => {
  try {
    execFileSync('espeak-ng', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

t.test(
  'the real decoder hears the commands of the home, one utterance after another',
  { skip: !local.ok ? (local.why ?? 'pocketsphinx is missing') : !espeak ? 'espeak-ng is not installed' : false },
  async (t) => {
    const dir = t.testdir({});
    const grammar = new LocalGrammar({
      dir,
      dictionary: local.files?.dict as string,
      entities: async () =>
        [
          { name: 'Kitchen Light', aliases: [] },
          { name: 'Desk Fan', aliases: [] },
        ] as never,
      areas: async () => [{ id: 'kitchen', name: 'Kitchen', aliases: [] }] as never,
      wakePhrases: () => ['hey home'],
      maxStates: () => 200_000,
      log: silentLogs().child('voice'),
    });
    const stt = new PocketsphinxStt({
      program: local.program as string,
      model: local.files as LocalModelFiles,
      grammar: () => grammar.files(),
      timeoutMs: 30_000,
    });
    t.teardown(() => stt.close());
    const say = (text: string) => {
      const wav = execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', text]);
      const raw = execFileSync('sox', ['-t', 'wav', '-', '-t', 'raw', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed', '-'], {
        input: wav,
      });
      return { samples: new Int16Array(raw.buffer, raw.byteOffset, raw.length / 2), sampleRate: 16000 };
    };
    t.equal((await stt.transcribe(say('turn on the kitchen light'), {})).text, 'turn on the kitchen light');
    t.equal((await stt.transcribe(say('turn off the desk fan'), {})).text, 'turn off the desk fan');
    // Talk outside the grammar is often forced onto some command ("unlock door throughout all of our
    // room now" for a sentence about a farm): the intent engine refuses most; bench/voice-commands.mjs counts the rest.
    // The decoder's cepstral mean adapts over the utterances before, so a loaded machine that once
    // ran this with a different history heard "lights" (CI, stop 41): the same command to the intent engine.
    t.match((await stt.transcribe(say('set the kitchen light to fifty percent'), {})).text, /^set the kitchen lights? to fifty percent$/u);
    // Faint noise the decoder never takes for speech: nothing heard (not the timeout's error), and the next command still is.
    const hiss = Int16Array.from({ length: 8000 }, (_, i) => ((i * 7919) % 13) - 6);
    t.equal((await stt.transcribe({ samples: hiss, sampleRate: 16000 }, {})).text, '');
    t.equal((await stt.transcribe(say('turn on the kitchen light'), {})).text, 'turn on the kitchen light');
    await t.rejects(stt.transcribe({ samples: new Int16Array(800), sampleRate: 8000 }, {}), { code: 'HA_ERR_VOICE_STT' });
  },
);
