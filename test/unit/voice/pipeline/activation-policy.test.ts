import t from 'tap';
import { ActivationPolicy, type ActivationRecord, type ActivationSettings } from '../../../../plugins/voice/activation-policy.js';

function setup(overrides: Partial<ActivationSettings> = {}) {
  let now = 1_000_000;
  const settings: ActivationSettings = { listenWindowMs: 8000, refractoryMs: 2000, wakePhrases: true, ...overrides };
  const records: ActivationRecord[] = [];
  const policy = new ActivationPolicy({ now: () => now, settings: () => settings, record: (entry) => records.push(entry) });
  return {
    policy,
    records,
    settings,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
      return now;
    },
  };
}

const hit = (command: string) => ({ phrase: 'hey home', heard: 'hey home', command, similarity: 0.95 });

t.test('push-to-talk accepts the next utterance that starts within the listen window, once', async (t) => {
  const { policy, records, now, advance } = setup();
  t.equal(policy.trigger('push_to_talk'), true);
  t.match(records, [{ method: 'push_to_talk', accepted: true, at: now() }]);
  const start = advance(7999);
  advance(3000); // the utterance may end after the window; only its start counts
  t.same(policy.decide(start), { kind: 'accept', method: 'push_to_talk' });
  t.same(policy.decide(advance(100)), { kind: 'wake_phrase' }, 'the window is used up');
});

t.test('an utterance starting after the window is not accepted, and closes the window', async (t) => {
  const { policy, advance } = setup({ wakePhrases: false });
  policy.trigger('wake_word', { score: 0.8, model: 'hey_home' });
  const start = advance(8001);
  t.same(policy.decide(start), { kind: 'drop' });
  t.equal(policy.state().armed, undefined);
});

t.test('speech already going on when the button is pressed does not use the window', async (t) => {
  const { policy, advance, now } = setup({ wakePhrases: false });
  const before = now();
  advance(500);
  policy.trigger('push_to_talk');
  t.same(policy.decide(before), { kind: 'drop' }, 'began before the press');
  const next = advance(1000);
  t.same(policy.decide(next), { kind: 'accept', method: 'push_to_talk' }, 'the window is still open for the next one');
});

t.test('without an armed window: wake phrase search, or drop untranscribed when wake phrases are off', async (t) => {
  t.same(setup().policy.decide(5), { kind: 'wake_phrase' });
  t.same(setup({ wakePhrases: false }).policy.decide(5), { kind: 'drop' });
});

t.test('a wake phrase with a command is an activation with that command', async (t) => {
  const { policy, records, now } = setup();
  t.same(policy.wakePhrase(hit(' tell me a joke '), now()), { kind: 'command', command: 'tell me a joke', phrase: 'hey home' });
  t.match(records, [{ method: 'wake_phrase', accepted: true, phrase: 'hey home', heard: 'hey home', score: 0.95 }]);
  t.equal(policy.state().armed, undefined, 'a command needs no listen window');
});

t.test('the wake phrase alone prompts and arms the window from the end of that utterance', async (t) => {
  const { policy, now, advance } = setup();
  const ended = now();
  advance(1500); // transcription took this long
  t.same(policy.wakePhrase(hit(''), ended), { kind: 'prompt', phrase: 'hey home' });
  t.match(policy.state().armed, { method: 'wake_phrase', until: ended + 8000 });
  t.same(policy.decide(ended + 200), { kind: 'accept', method: 'wake_phrase' }, 'a command begun during transcription counts');
});

t.test('no wake phrase: ignored and not logged (it is not a trigger)', async (t) => {
  const { policy, records, now } = setup();
  t.same(policy.wakePhrase(undefined, now()), { kind: 'ignore', reason: 'no_wake_phrase' });
  t.same(records, []);
});

t.test('refractory period: triggers after an accepted activation are rejected and logged', async (t) => {
  const { policy, records, advance } = setup();
  t.equal(policy.trigger('push_to_talk'), true);
  advance(1999);
  t.equal(policy.trigger('wake_word', { score: 0.7, model: 'm' }), false);
  t.same(policy.wakePhrase(hit('lights on'), 0), { kind: 'ignore', reason: 'refractory' });
  t.match(records.slice(1), [
    { method: 'wake_word', accepted: false, reason: 'refractory', score: 0.7, model: 'm' },
    { method: 'wake_phrase', accepted: false, reason: 'refractory', phrase: 'hey home' },
  ]);
  t.ok(policy.state().refractory_until !== undefined);
  advance(1);
  t.equal(policy.state().refractory_until, undefined);
  t.equal(policy.trigger('wake_word'), true, 'accepted once refractory_ms passed');
});

t.test('rejected triggers do not extend the refractory period', async (t) => {
  const { policy, advance } = setup();
  policy.trigger('push_to_talk');
  advance(1500);
  policy.trigger('push_to_talk');
  advance(500);
  t.equal(policy.trigger('push_to_talk'), true);
});

t.test('settings are read on each decision (changes apply at once)', async (t) => {
  const { policy, settings, advance } = setup();
  settings.refractoryMs = 0;
  policy.trigger('push_to_talk');
  t.equal(policy.trigger('push_to_talk'), true);
  settings.listenWindowMs = 1000;
  policy.trigger('push_to_talk');
  t.same(policy.decide(advance(1001)), { kind: 'wake_phrase' });
});

t.test('disarm closes the window', async (t) => {
  const { policy, now } = setup({ wakePhrases: false });
  policy.trigger('push_to_talk');
  policy.disarm();
  t.same(policy.decide(now()), { kind: 'drop' });
});
