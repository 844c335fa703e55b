/**
 * A camera picture on its way to the model, through the built daemon: fswebcam's TEST device
 * (HOMEAGENT_PLUGIN_CAMERA_DEVICE=TEST) and the scripted LLM server as the default source. The
 * model first calls the tool camera_snapshot, then answers; what the second request carries is
 * checked. With core.llm.vision the picture itself goes along, as an image_url data URL whose
 * bytes are the JPEG in <data>/media; without it the model reads a note that a picture was stored,
 * and no image leaves the house.
 *
 * Time here is real (a daemon): every wait polls with a deadline or waits for a reply.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type RecordedRequest, type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';
import { fswebcamMissing } from '../helpers/system-tools.js';

const WAIT_MS = 60_000;
const DATA_URL = /^data:image\/jpeg;base64,([A-Za-z0-9+/=]+)$/;

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-camera',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

const snapshotCall: ScriptStep = {
  sse: [
    chunk({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: 'call_camera', type: 'function', function: { name: 'camera_snapshot', arguments: '' } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
    chunk({}, 'tool_calls'),
  ],
  done: true,
};

const textReply = (text: string): ScriptStep => ({
  sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: text }), chunk({}, 'stop')],
  done: true,
});

type Part = { type: string; text?: string; image_url?: { url: string } };
type Message = { role: string; content: string | Part[] | null; tool_call_id?: string };

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The picture the tool stored, from the digest its result names. */
function storedPicture(t: Test, dataDir: string, request: RecordedRequest): { digest: string; jpeg: Buffer } {
  const messages = request.body.messages as Message[];
  const result = messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_camera');
  const digest = String((JSON.parse(String(result?.content ?? '{}')) as { digest?: unknown }).digest);
  t.match(digest, /^[0-9a-f]{64}$/, 'the tool result names the stored picture');
  const file = join(dataDir, 'media', 'sha256', digest.slice(0, 2), digest);
  t.ok(existsSync(file), `the picture is in the media store (${file})`);
  return { digest, jpeg: existsSync(file) ? readFileSync(file) : Buffer.alloc(0) };
}

/** A daemon with the camera and the scripted model (vision or not); answers the two model requests. */
async function askForPicture(t: Test, vision: boolean): Promise<{ requests: RecordedRequest[]; dataDir: string; answer: string }> {
  const llm = await startScriptedServer(t);
  llm.enqueue(snapshotCall, textReply('I see a test pattern.'));
  const dir = tempDir(t, 'ha-camera-vision-');
  const config = join(dir, 'config.yaml');
  const dataDir = join(dir, 'data');
  writeFileSync(
    config,
    JSON.stringify({
      core: { llm: { base_url: llm.url, api_key: 'sk-test', model: 'test-model', vision } },
      plugin: { camera: { name: 'Hall camera', area: 'hall', resolution: '320x240', skip_frames: 0 } },
    }),
  );
  const daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config, HOMEAGENT_PLUGIN_CAMERA_DEVICE: 'TEST' } });
  await daemon.waitForReady(WAIT_MS);
  const r = await daemon.ctl(['chat', '-m', 'What does the hall camera see?'], { timeoutMs: WAIT_MS });
  t.equal(r.code, 0, r.stderr);
  const requests = llm.requests.filter((q) => q.path.endsWith('/chat/completions'));
  t.equal(requests.length, 2, 'the tool call, then the answer');
  return { requests, dataDir, answer: r.stdout.trim() };
}

t.test('a vision model gets the picture the tool took', { skip: fswebcamMissing() }, async (t) => {
  const { requests, dataDir, answer } = await askForPicture(t, true);
  t.equal(answer, 'I see a test pattern.');
  const [first, second] = requests;
  if (!first || !second) return;
  t.ok(
    (first.body.tools as Array<{ function: { name: string } }>).some((x) => x.function.name === 'camera_snapshot'),
    'the tool is offered',
  );
  const { digest, jpeg } = storedPicture(t, dataDir, second);
  const images = (second.body.messages as Message[])
    .filter((m) => m.role === 'user' && Array.isArray(m.content))
    .flatMap((m) => (m.content as Part[]).filter((p) => p.type === 'image_url'));
  t.equal(images.length, 1, 'one picture goes to the model');
  const url = images[0]?.image_url?.url ?? '';
  const base64 = DATA_URL.exec(url)?.[1];
  t.ok(base64, 'as a JPEG data URL');
  const sent = Buffer.from(base64 ?? '', 'base64');
  t.same([...sent.subarray(0, 3)], [0xff, 0xd8, 0xff], 'the bytes are a JPEG');
  t.equal(sha256(sent), digest, 'exactly the stored picture');
  t.ok(sent.equals(jpeg), 'byte for byte');
  t.notMatch(JSON.stringify(second.body.messages), /picture not shown/, 'no note in place of it');
});

t.test('a model without vision reads a note instead, and no image is sent', { skip: fswebcamMissing() }, async (t) => {
  const { requests, dataDir } = await askForPicture(t, false);
  const second = requests[1];
  if (!second) return;
  const { digest } = storedPicture(t, dataDir, second);
  const body = JSON.stringify(second.body.messages);
  t.notMatch(body, /image_url|data:image/, 'no image part');
  const notes = (second.body.messages as Message[]).filter(
    (m) => m.role === 'user' && typeof m.content === 'string' && m.content.includes('[picture not shown'),
  );
  t.equal(notes.length, 1, 'one user message carries the note');
  t.match(notes[0]?.content, new RegExp(`\\[picture not shown: [^\\]]*${digest.slice(0, 12)}\\]`), 'naming the stored picture');
});
