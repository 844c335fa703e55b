/**
 * The Wyoming client against a hostile speech server: 500 calls (describe, transcribe, synthesize,
 * eight at a time), each on a connection the server resets at accept or mid-request, answers with
 * garbage, half a header, a data block or payload that stops short, an absurd length, an error
 * event, a valid answer split into single bytes, or a valid answer. Every call settles: with the
 * right value, or with one HA_ERR_VOICE_WYOMING naming the server; nothing is thrown anywhere else
 * (tap fails the test on an uncaught exception), every connection is closed again, and a good call
 * afterwards works.
 *
 * The storm is random from one seed, printed as a comment: STORM_SEED=<seed> replays it.
 */
import type { Socket } from 'node:net';
import t from 'tap';
import { WyomingClient } from '../../../../plugins/voice/wyoming-client.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';
import { garbage, pool, Rng, startHostileServer, stormSeed } from '../../../helpers/storm.js';
import { frame } from '../../../helpers/wyoming-server.js';

const CALLS = 500;
const FORMAT = { rate: 16000, width: 2, channels: 1 };
const INFO = { asr: [{ name: 'whisper', models: [{ name: 'tiny', languages: ['en'] }] }], tts: [] };
const PCM = Buffer.alloc(3200, 7);

type Question = 'describe' | 'transcribe' | 'synthesize';

/** The well-formed answer to each question. */
function answer(question: Question): Buffer {
  if (question === 'describe') return frame('info', INFO);
  if (question === 'transcribe') return frame('transcript', { text: 'turn on the light', language: 'en' });
  return Buffer.concat([frame('audio-start', FORMAT), frame('audio-chunk', FORMAT, PCM), frame('audio-stop', {})]);
}

/** What the server does with a connection, given the question the client asked (its first header line). */
const BEHAVIOURS: Array<(socket: Socket, question: Question, rng: Rng) => void> = [
  (socket) => socket.resetAndDestroy(),
  (socket) => socket.end(),
  (socket, _q, rng) => socket.end(Buffer.concat([garbage(rng), Buffer.from('\n')])),
  (socket) => socket.end('{"type": "transcript", "data_length"'),
  (socket) => socket.end(Buffer.concat([Buffer.from(`${JSON.stringify({ type: 'info', data_length: 100 })}\n`), Buffer.from('{"asr":')])),
  (socket) => socket.write(`${JSON.stringify({ type: 'audio-chunk', data: FORMAT, payload_length: 1e12 })}\n`),
  (socket) => socket.write(`${JSON.stringify({ type: 'info', data_length: -5 })}\n`),
  (socket) => socket.write(`${JSON.stringify({ type: 'transcript', data: [1, 2] })}\n`),
  (socket) => socket.end(frame('error', { text: 'model not loaded', code: 'not-ready' })),
  (socket, question) => {
    // Half the answer, then a reset: a server that died mid-message.
    const whole = answer(question);
    socket.write(whole.subarray(0, Math.max(1, whole.length >> 1)), () => socket.resetAndDestroy());
  },
  (socket, question) => {
    const whole = answer(question);
    let at = 0;
    const next = () => {
      if (socket.destroyed) return;
      if (at >= whole.length) {
        socket.end();
        return;
      }
      socket.write(whole.subarray(at, at + 1), next);
      at++;
    };
    next();
  },
  (socket) => socket.end(`${'x'.repeat(70_000)}`),
  (socket, question) => socket.end(answer(question)),
];

function questionOf(chunk: Buffer): Question | undefined {
  const line = chunk.subarray(0, Math.max(0, chunk.indexOf(0x0a))).toString();
  try {
    const type = (JSON.parse(line) as { type?: unknown }).type;
    return type === 'describe' || type === 'transcribe' || type === 'synthesize' ? type : undefined;
  } catch {
    return undefined;
  }
}

t.test(`${CALLS} Wyoming calls against a hostile server all settle, and the client goes on`, async (t) => {
  const rng = new Rng(stormSeed(t));
  let hostile = true;
  const server = await startHostileServer((socket, index) => {
    const behaviour = hostile ? (BEHAVIOURS[index % BEHAVIOURS.length] as (typeof BEHAVIOURS)[number]) : BEHAVIOURS.at(-1);
    // Reset at accept, before the question, for a share of the connections.
    if (hostile && index % 7 === 3) {
      socket.resetAndDestroy();
      return;
    }
    socket.once('data', (chunk: Buffer) => {
      const question = questionOf(chunk);
      if (question === undefined) socket.destroy();
      else behaviour?.(socket, question, rng);
    });
  });
  t.teardown(() => server.close());
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port, timeoutMs: 10_000, maxPayloadBytes: 1024 * 1024 });

  const call = (question: Question): Promise<unknown> => {
    if (question === 'describe') return client.describe();
    if (question === 'transcribe') return client.transcribe(PCM, { ...FORMAT, language: 'en' });
    return client.synthesize('hello', { voice: 'en' });
  };
  const outcomes = { resolved: 0, failed: 0 };
  const messages = new Set<string>();
  const wrong: string[] = [];
  await pool(CALLS, 8, async () => {
    const question = rng.pick(['describe', 'transcribe', 'synthesize'] as const);
    try {
      const value = await call(question);
      outcomes.resolved++;
      const ok =
        question === 'describe'
          ? (value as { asr: Array<{ name: string }> }).asr[0]?.name === 'whisper'
          : question === 'transcribe'
            ? (value as { text: string }).text === 'turn on the light'
            : (value as { pcm: Buffer }).pcm.equals(PCM);
      if (!ok) wrong.push(`${question} resolved with ${JSON.stringify(value).slice(0, 200)}`);
    } catch (error) {
      outcomes.failed++;
      if (!isHomeAgentError(error, 'HA_ERR_VOICE_WYOMING') || !error.message.startsWith(`Wyoming server 127.0.0.1:${server.port}: `)) {
        wrong.push(`${question} failed with ${String(error)}`);
      } else messages.add(error.message.replace(/\(".*"\)$/s, '(…)').replace(/\d+/g, 'N'));
    }
  });
  t.same(wrong, [], 'every call settled with the right value or one HA_ERR_VOICE_WYOMING naming the server');
  t.comment(`outcomes: ${JSON.stringify(outcomes)}; failures seen: ${[...messages].join(' | ')}`);
  t.ok(outcomes.resolved > 0 && outcomes.failed > 0, 'both good and hostile answers came');
  t.equal(server.connections, CALLS, 'one connection per call');
  await server.closedConnections(CALLS);
  t.pass('every connection was closed again');

  hostile = false;
  t.same(
    await client.describe(),
    { asr: [{ name: 'whisper', models: [{ name: 'tiny', languages: ['en'] }] }], tts: [] },
    'a good call afterwards',
  );
});
