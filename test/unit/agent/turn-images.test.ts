import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Agent, type FinishedTurn, newStageContext } from '../../../src/agent/agent.js';
import { ConversationBuffer } from '../../../src/agent/conversation-buffer.js';
import { Persona } from '../../../src/agent/persona.js';
import { PromptBuilder } from '../../../src/agent/prompt-builder.js';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import { ToolExecutor } from '../../../src/agent/tool-executor.js';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import { TurnImages } from '../../../src/agent/turn-images.js';
import { EventBus } from '../../../src/events/event-bus.js';
import type { TaskControl } from '../../../src/io/types.js';
import type { ChatMessage, UserContentPart } from '../../../src/llm/spec/index.js';
import { systemClock } from '../../../src/shared/clock.js';
import { MediaStore } from '../../../src/store/media-store.js';
import { call, MockModel } from '../../helpers/mock-model.js';
import { silentLogs, type Teardown, tempDir } from '../fixtures/support.js';
import { makeInput } from './fixtures/helpers.js';

/** A distinct JPEG-typed byte string per `n` (the store reads the type from the first bytes). */
function jpeg(n: number, size = 64): Buffer {
  const bytes = Buffer.alloc(size, n);
  bytes.set([0xff, 0xd8, 0xff, 0xe0], 0);
  return bytes;
}

const WAV = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(32)]);

interface Rig {
  agent: Agent;
  model: MockModel;
  media: MediaStore;
  conversation: ConversationBuffer;
  remembered: FinishedTurn[];
}

/** An agent whose `snap` tool stores and attaches the pictures each call names (`n` → jpeg(n), `wav`, `missing`). */
function rig(t: Teardown, maxImages?: number): Rig {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'persona.md'), 'You are the test persona.');
  const log = silentLogs().child('agent');
  const media = new MediaStore({ dir: join(dir, 'media'), maxBytes: () => 1024 * 1024 });
  const tools = new ToolRegistry({ log });
  tools.register({
    name: 'snap',
    description: 'Takes pictures.',
    parameters: { type: 'object', properties: { pictures: { type: 'array', items: { type: 'string' } } }, required: ['pictures'] },
    owner: 'plugin:camera',
    tier: 'read',
    execute: ({ pictures }, context) => {
      const digests: string[] = [];
      for (const p of pictures as string[]) {
        const digest = p === 'missing' ? 'f'.repeat(64) : media.put(p === 'wav' ? WAV : jpeg(Number(p))).digest;
        context.attachImage?.({ digest, mime: 'image/jpeg' });
        digests.push(digest);
      }
      return { stored: digests };
    },
  });
  const stages = new StageRegistry(log);
  const executor = new ToolExecutor({
    registry: tools,
    stages,
    limits: () => ({ tool_timeout_ms: 2000, tool_output_max_chars: 4000, max_parallel_tools: 4 }),
    log,
  });
  const model = new MockModel();
  const conversation = new ConversationBuffer();
  const remembered: FinishedTurn[] = [];
  let id = 0;
  const agent = new Agent({
    model,
    modelConfigured: () => true,
    offlineText: () => 'offline',
    tools: { specs: () => tools.specs(), executeBatch: (calls, o) => executor.executeBatch(calls, o) },
    stages,
    io: { channelFor: () => ({ name: 'cli', synchronous: true, description: 'cli' }), send: async () => {} },
    prompt: new PromptBuilder({
      persona: new Persona({ file: () => join(dir, 'none.md'), defaultFile: join(dir, 'persona.md'), log }),
      toolSummary: () => tools.summaryByOwner(),
    }),
    conversation,
    remember: async (turn) => void remembered.push(turn),
    media,
    events: new EventBus(log),
    limits: () => ({
      max_tool_turns: 10,
      temperature: 0.7,
      max_tokens: 1000,
      ...(maxImages === undefined ? {} : { max_images_per_turn: maxImages }),
    }),
    clock: systemClock,
    log,
    newId: () => `id-${++id}`,
  });
  return { agent, model, media, conversation, remembered };
}

function control(): TaskControl {
  return {
    task_id: 'task-1',
    signal: new AbortController().signal,
    safePoint: async () => {},
    llmSignal: () => new AbortController().signal,
    critical: (fn) => fn(),
  };
}

/** The parts of the picture messages (user messages with parts) of a request. */
function pictureParts(messages: ChatMessage[] | undefined): UserContentPart[][] {
  return (messages ?? []).flatMap((m) => (m.role === 'user' && typeof m.content !== 'string' ? [m.content] : []));
}

t.test('a picture attached by a tool is in the next request, after the tool result, and nowhere after the turn', async (t) => {
  const r = rig(t);
  r.model.push(
    { tool_calls: [call('snap', { pictures: ['1'] })] },
    { tool_calls: [call('snap', { pictures: [] })] },
    { text: 'A parcel.' },
  );
  const result = await r.agent.run(makeInput({ payload: 'who is at the door?' }), control());
  t.equal(result.text, 'A parcel.');

  t.same(pictureParts(r.model.requests[0]?.messages), [], 'the first request has no picture');
  const second = r.model.requests[1]?.messages ?? [];
  const at = second.findIndex((m) => m.role === 'user' && typeof m.content !== 'string');
  t.equal(second[at - 1]?.role, 'tool', 'the picture message follows the tool result');
  const digest = r.media.put(jpeg(1)).digest;
  t.same(second[at], {
    role: 'user',
    content: [
      { type: 'text', text: 'Picture(s) from snap:' },
      { type: 'image', mime: 'image/jpeg', data: jpeg(1).toString('base64'), digest },
    ],
  });
  t.equal(pictureParts(r.model.requests[2]?.messages).length, 1, 'the later request of the same turn still shows it (once)');

  const base64 = jpeg(1).toString('base64');
  t.notMatch(JSON.stringify(r.conversation.messages('cli')), base64, 'the stored conversation has no base64');
  t.notMatch(JSON.stringify(r.remembered), base64, 'memory gets no base64');
  t.equal(r.remembered[0]?.text, 'who is at the door?');

  r.model.push({ text: 'Nothing new.' });
  await r.agent.run(makeInput({ id: 'in-2', payload: 'and now?' }), control());
  t.same(pictureParts(r.model.requests[3]?.messages), [], 'the next turn does not see the picture');
});

t.test('at most max_images_per_turn pictures per turn; the rest, missing and non-image ones become notes', async (t) => {
  const r = rig(t, 2);
  r.model.push(
    { tool_calls: [call('snap', { pictures: ['1', 'wav', 'missing', '2', '3'] })] },
    { tool_calls: [call('snap', { pictures: ['4'] })] },
    { text: 'done' },
  );
  await r.agent.run(makeInput(), control());
  const [first] = pictureParts(r.model.requests[1]?.messages);
  t.same(
    first?.map((p) => (p.type === 'image' ? `image ${p.mime}` : p.text.replace(/[0-9a-f]{12}/, 'D'))),
    [
      'Picture(s) from snap:',
      'image image/jpeg',
      '[picture D not shown: it is not an image]',
      '[picture D not shown: it is not in the media store]',
      'image image/jpeg',
      '[picture D not shown: at most 2 pictures are shown per request]',
    ],
  );
  const later = pictureParts(r.model.requests[2]?.messages);
  t.equal(later.length, 2, 'the second round adds its own picture message');
  t.match(later[1], [{ text: 'Picture(s) from snap:' }, { type: 'text', text: /at most 2 pictures/ }], 'the cap holds across rounds');
});

t.test('the byte cap: a picture that would pass it is not shown', async (t) => {
  const dir = tempDir(t);
  const media = new MediaStore({ dir, maxBytes: () => 1024 * 1024 });
  const images = new TurnImages(media, { max_images: 10, max_bytes: 150 });
  const a = media.put(jpeg(1, 100)).digest;
  const b = media.put(jpeg(2, 100)).digest;
  const round = images.round();
  round.attach('cam', { digest: a, mime: 'image/jpeg' });
  round.attach('cam', { digest: b, mime: 'image/jpeg' });
  const message = round.message();
  t.match(message, {
    role: 'user',
    content: [{ type: 'text' }, { type: 'image', digest: a }, { type: 'text', text: /at most 150 bytes/ }],
  });
  round.attach('cam', { digest: a, mime: 'image/jpeg' });
  t.equal(images.round().message(), undefined, 'a round without pictures adds no message');
});

t.test('a turn whose tools attach nothing adds no picture message', async (t) => {
  const r = rig(t);
  r.model.push({ tool_calls: [call('snap', { pictures: [] })] }, { text: 'ok' });
  await r.agent.run(makeInput(), control());
  t.same(pictureParts(r.model.requests[1]?.messages), []);
});

t.test('the executor hands attachImage to a tool only when the batch has a receiver, named after the tool', async (t) => {
  const log = silentLogs().child('agent');
  const tools = new ToolRegistry({ log });
  const seen: boolean[] = [];
  tools.register({
    name: 'probe',
    description: 'Looks at its context.',
    parameters: { type: 'object', properties: {} },
    owner: 'core',
    tier: 'read',
    execute: (_args, context) => {
      seen.push(typeof context.attachImage === 'function');
      context.attachImage?.({ digest: 'a'.repeat(64), mime: 'image/png' });
      return 'ok';
    },
  });
  const executor = new ToolExecutor({
    registry: tools,
    stages: new StageRegistry(log),
    limits: () => ({ tool_timeout_ms: 2000, tool_output_max_chars: 4000, max_parallel_tools: 4 }),
    log,
  });
  const base = { task_id: 't', input: makeInput(), signal: new AbortController().signal, stageContext: newStageContext('t', makeInput()) };
  const received: Array<[string, string]> = [];
  await executor.executeBatch([call('probe')], base);
  await executor.executeBatch([call('probe')], { ...base, attachImage: (tool, image) => void received.push([tool, image.digest]) });
  t.same(seen, [false, true]);
  t.same(received, [['probe', 'a'.repeat(64)]]);
});
