import t from 'tap';
import { formatActivations, formatVoiceStatus, parseVoiceCommand, VoiceUsageError } from '../../../src/cli/voice.js';

t.test('parses the voice commands; no sub-command means status', async (t) => {
  t.same(parseVoiceCommand([], {}), { command: 'status' });
  t.same(parseVoiceCommand(['status'], {}), { command: 'status' });
  t.same(parseVoiceCommand(['say', 'dinner', 'is', 'ready'], {}), { command: 'say', text: 'dinner is ready' });
  t.same(parseVoiceCommand(['say', '晚饭好了'], { language: 'zh' }), { command: 'say', text: '晚饭好了', language: 'zh' });
  t.same(parseVoiceCommand(['listen'], {}), { command: 'listen' });
  t.same(parseVoiceCommand(['activations'], { limit: '20' }), { command: 'activations', limit: 20 });
});

t.test('refuses what it cannot do, naming the problem', async (t) => {
  const refused = (args: string[], flags: Record<string, string>, message: RegExp) =>
    t.throws(() => parseVoiceCommand(args, flags), { constructor: VoiceUsageError, message }, message.source);
  refused(['shout'], {}, /unknown voice command shout/);
  refused(['say'], {}, /needs a TEXT/);
  refused(['say', 'hi'], { language: 'fr' }, /--language must be en or zh/);
  refused(['say', 'hi'], { limit: '3' }, /--limit does not belong to voice say/);
  refused(['activations'], { limit: '0' }, /--limit must be a whole number/);
  refused(['activations'], { limit: 'ten' }, /--limit must be a whole number/);
  refused(['listen', 'now'], {}, /takes no arguments/);
  refused(['status'], { language: 'en' }, /--language does not belong to voice status/);
});

t.test('status: one line per part with its fields', async (t) => {
  const text = formatVoiceStatus({
    microphone: { state: 'waiting', problem: 'no such device', restarts: 3 },
    stt: { backend: 'none' },
    speaker: { enabled: true, problem: undefined },
  });
  t.match(text, /^microphone\s+state=waiting problem=no such device restarts=3$/m);
  t.match(text, /^stt\s+backend=none$/m);
  t.match(text, /^speaker\s+enabled=true$/m, 'undefined fields are left out');
});

t.test('activations: a table, newest first as given; an empty log says why it may be empty', async (t) => {
  const text = formatActivations([
    { at: '2026-12-01T10:00:00.000Z', method: 'wake_phrase', accepted: true, phrase: 'hey home', heard: 'Hey home' },
    { at: '2026-12-01T09:59:00.000Z', method: 'push_to_talk', accepted: false, reason: 'refractory' },
    { at: '2026-12-01T09:58:00.000Z', method: 'wake_word', accepted: true, score: 0.8123, model: 'hey_home' },
  ]);
  const lines = text.split('\n');
  t.match(lines[0], /^AT\s+METHOD\s+ACCEPTED\s+SCORE\s+HEARD$/);
  t.match(lines[1], /wake_phrase\s+yes\s+Hey home$/);
  t.match(lines[2], /push_to_talk\s+no: refractory$/);
  t.match(lines[3], /wake_word\s+yes\s+0\.81\s+hey_home$/);
  t.match(formatActivations([]), /no activations recorded/);
});
