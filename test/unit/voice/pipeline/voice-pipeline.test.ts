import t from 'tap';
import { matchWakePhrase } from '../../../../plugins/voice/activation/wake-phrase.js';
import { ActivationPolicy, type ActivationRecord } from '../../../../plugins/voice/activation-policy.js';
import type { SpeechToText, Utterance } from '../../../../plugins/voice/speech.js';
import { spokenLanguage } from '../../../../plugins/voice/spoken-text.js';
import { APOLOGY, MAX_WAITING_UTTERANCES, PROMPT, type VoiceCommand, VoicePipeline } from '../../../../plugins/voice/voice-pipeline.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { silentLogs } from '../../fixtures/support.js';

const utterance = (ms = 1000): Utterance => ({
  samples: new Int16Array(16 * ms),
  sampleRate: 16000,
  speechStartMs: 0,
  speechEndMs: ms,
  truncated: false,
});

function setup(options: { transcript?: string | Error | string[]; language?: string; wakePhrases?: boolean; bargeIn?: boolean } = {}) {
  let now = 5_000_000;
  const records: ActivationRecord[] = [];
  const settings = { listenWindowMs: 8000, refractoryMs: 2000, wakePhrases: options.wakePhrases ?? true };
  const policy = new ActivationPolicy({ now: () => now, settings: () => settings, record: (r) => records.push(r) });
  const transcribed: Utterance[] = [];
  const stt: SpeechToText = {
    name: 'fake',
    transcribe: async (audio) => {
      transcribed.push(audio as Utterance);
      const given = options.transcript ?? '';
      const result = Array.isArray(given) ? (given.shift() ?? '') : given;
      if (result instanceof Error) throw result;
      return { text: result, ...(options.language ? { language: options.language } : {}) };
    },
  };
  const said: string[] = [];
  let interrupted = 0;
  const speaker = {
    active: false,
    say: async (text: string) => {
      said.push(text);
    },
    interrupt: () => {
      interrupted++;
      return true;
    },
  };
  const commands: VoiceCommand[] = [];
  const pipeline = new VoicePipeline({
    now: () => now,
    policy,
    stt: () => stt,
    speaker,
    bargeIn: () => options.bargeIn ?? true,
    wakePhrases: () => ['hey home', '小宅'],
    matchWakePhrase: (text, phrases) => matchWakePhrase(text, phrases),
    spokenLanguage,
    languageHint: () => undefined,
    command: async (command) => commands.push(command),
    log: silentLogs().child('voice'),
  });
  return {
    pipeline,
    policy,
    records,
    transcribed,
    said,
    commands,
    speaker,
    interrupted: () => interrupted,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

t.test('a wake phrase with a command: the command without the phrase goes to the agent', async (t) => {
  const s = setup({ transcript: 'Hey home, tell me a joke.' });
  await s.pipeline.utterance(utterance());
  t.same(s.commands, [{ command: 'tell me a joke.', language: 'en', activation: 'wake_phrase' }]);
  t.same(s.said, [], 'the answer comes through the speaker channel, not from the pipeline');
  t.match(s.records, [{ method: 'wake_phrase', accepted: true, phrase: 'hey home' }]);
});

t.test('Chinese: the language comes from the back end or the text', async (t) => {
  const s = setup({ transcript: '小宅，把客厅的灯打开', language: 'zh' });
  await s.pipeline.utterance(utterance());
  t.match(s.commands, [{ command: '把客厅的灯打开', language: 'zh', activation: 'wake_phrase' }]);
  const guessed = setup({ transcript: '小宅，把客厅的灯打开' });
  await guessed.pipeline.utterance(utterance());
  t.match(guessed.commands, [{ language: 'zh' }]);
});

t.test('the bare wake phrase prompts in its language and the next utterance is the command', async (t) => {
  const s = setup({ transcript: ['小宅', '把灯关了', '把灯打开'] });
  await s.pipeline.utterance(utterance());
  t.same(s.said, [PROMPT.zh]);
  t.same(s.commands, []);
  s.advance(3000);
  s.pipeline.speechStarted();
  s.advance(1000);
  await s.pipeline.utterance(utterance());
  t.same(s.commands, [{ command: '把灯关了', language: 'zh', activation: 'wake_phrase' }], 'no wake phrase needed in the window');
  s.pipeline.speechStarted();
  await s.pipeline.utterance(utterance());
  t.equal(s.commands.length, 1, 'the window served one utterance');
});

t.test('push-to-talk: the whole utterance is the command, a wake phrase in it is removed', async (t) => {
  const s = setup({ transcript: 'turn on the kitchen light', wakePhrases: false });
  s.policy.trigger('push_to_talk');
  s.advance(500);
  s.pipeline.speechStarted();
  s.advance(1500);
  await s.pipeline.utterance(utterance());
  t.same(s.commands, [{ command: 'turn on the kitchen light', language: 'en', activation: 'push_to_talk' }]);

  const w = setup({ transcript: 'hey home what time is it', wakePhrases: false });
  w.policy.trigger('wake_word', { score: 0.9, model: 'hey_home' });
  w.pipeline.speechStarted();
  await w.pipeline.utterance(utterance());
  t.same(w.commands, [{ command: 'what time is it', language: 'en', activation: 'wake_word' }]);
});

t.test('no activation and wake phrases off: dropped without being transcribed', async (t) => {
  const s = setup({ transcript: 'hey home tell me a joke', wakePhrases: false });
  s.pipeline.speechStarted();
  await s.pipeline.utterance(utterance());
  t.equal(s.transcribed.length, 0);
  t.same(s.commands, []);
  t.match(s.pipeline.stats(), { utterances: 1, dropped: 1, transcribed: 0 });
});

t.test('speech without the wake phrase is transcribed and ignored', async (t) => {
  const s = setup({ transcript: 'what are we having for dinner' });
  await s.pipeline.utterance(utterance());
  t.same(s.commands, []);
  t.same(s.said, []);
  t.same(s.records, []);
});

t.test('speech-to-text fails on an activated utterance: an apology, no command', async (t) => {
  const s = setup({ transcript: new HomeAgentError('HA_ERR_VOICE_STT', 'server down') });
  s.policy.trigger('push_to_talk');
  s.pipeline.speechStarted();
  await s.pipeline.utterance(utterance());
  t.same(s.said, [APOLOGY.en]);
  t.same(s.commands, []);
  t.match(s.pipeline.stats(), { stt_failures: 1 });

  const quiet = setup({ transcript: new HomeAgentError('HA_ERR_VOICE_STT', 'server down') });
  await quiet.pipeline.utterance(utterance());
  t.same(quiet.said, [], 'no apology for speech that may not have been for us');
});

t.test('an activated utterance with an empty transcript gets the apology', async (t) => {
  const s = setup({ transcript: '' });
  s.policy.trigger('push_to_talk');
  s.pipeline.speechStarted();
  await s.pipeline.utterance(utterance());
  t.same(s.said, [APOLOGY.en]);
});

t.test('barge-in: speech start while the speaker plays interrupts it, when barge_in is on', async (t) => {
  const s = setup();
  s.pipeline.speechStarted();
  t.equal(s.interrupted(), 0, 'nothing playing');
  s.speaker.active = true;
  s.pipeline.speechStarted();
  t.equal(s.interrupted(), 1);
  t.match(s.pipeline.stats(), { barge_ins: 1 });
  const off = setup({ bargeIn: false });
  off.speaker.active = true;
  off.pipeline.speechStarted();
  t.equal(off.interrupted(), 0);
});

t.test('utterances are handled in order', async (t) => {
  const s = setup({ transcript: ['hey home one', 'hey home two'], wakePhrases: true });
  s.policy.trigger('push_to_talk');
  s.pipeline.speechStarted();
  const first = s.pipeline.utterance(utterance());
  const second = s.pipeline.utterance(utterance());
  await Promise.all([first, second]);
  t.same(
    s.commands.map((c) => c.command),
    ['one'],
    'the second is within the refractory period of the first press',
  );
  s.advance(3000);
  s.pipeline.speechStarted();
  await s.pipeline.utterance(utterance());
  t.same(
    s.commands.map((c) => c.command),
    ['one'],
    'no transcripts left: an empty one is ignored',
  );
});

t.test('while speech-to-text is behind, utterances beyond the waiting limit are dropped, not queued', async (t) => {
  const s = setup({ transcript: 'the television talking', wakePhrases: true });
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = new VoicePipeline({
    now: () => 5_000_000,
    policy: s.policy,
    stt: () => ({
      name: 'slow',
      transcribe: async () => {
        await gate;
        return { text: 'the television talking' };
      },
    }),
    bargeIn: () => false,
    wakePhrases: () => ['hey home'],
    matchWakePhrase: (text, phrases) => matchWakePhrase(text, phrases),
    spokenLanguage,
    languageHint: () => undefined,
    command: async () => {},
    log: silentLogs().child('voice'),
  });
  const heard = Array.from({ length: 2 + MAX_WAITING_UTTERANCES }, () => slow.utterance(utterance()));
  release();
  await Promise.all(heard);
  t.equal(slow.stats().transcribed, 1 + MAX_WAITING_UTTERANCES, 'the one in progress and the waiting ones were transcribed');
  t.equal(slow.stats().dropped, 1, 'the one beyond the limit was dropped');
});
