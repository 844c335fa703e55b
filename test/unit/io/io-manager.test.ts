import t, { type Test } from 'tap';
import { IoManager } from '../../../src/io/io-manager.js';
import { CAPABILITY, type OutputChannel, type OutputEvent } from '../../../src/io/types.js';
import type { Clock } from '../../../src/shared/clock.js';
import { type ToolContext, type ToolDefinition, ToolError, type ToolErrorInfo } from '../../../src/shared/tool.js';
import { expectError, expectErrorAsync } from '../fixtures/support.js';

const fixedClock: Clock = { now: () => 1_700_000_000_000, monotonic: () => 0 };

function manager(): IoManager {
  return new IoManager({ clock: fixedClock });
}

interface RecordingChannel extends OutputChannel {
  sent: OutputEvent[];
}

function channel(name: string, capabilities: number, extra: Partial<OutputChannel> = {}): RecordingChannel {
  const sent: OutputEvent[] = [];
  return {
    name,
    description: `the ${name} channel`,
    capabilities,
    synchronous: false,
    owner: 'plugin:test',
    sent,
    send: async (event) => void sent.push(event),
    ...extra,
  };
}

function context(): ToolContext {
  return { signal: new AbortController().signal, task_id: 'task-1', call_id: 'call-1', source: 'qq', channel: 'chat-42', trust: 'owner' };
}

function tool(io: IoManager, name: string): ToolDefinition {
  const found = io.tools().find((d) => d.name === name);
  if (!found)
    throw new Error(
      `tool ${name} not offered; have ${io
        .tools()
        .map((d) => d.name)
        .join(', ')}`,
    );
  return found;
}

/** Runs a tool expecting a ToolError; returns its info. */
async function toolError(t: Test, run: () => unknown): Promise<ToolErrorInfo> {
  try {
    await run();
  } catch (error) {
    t.ok(error instanceof ToolError, `a ToolError (got ${String(error)})`);
    if (error instanceof ToolError) return error.info;
    throw error;
  }
  t.fail('expected a ToolError, the tool succeeded');
  return { reason: 'failed', detail: 'no error' };
}

t.test('registers channels, lists them, and refuses duplicates and bad names', async (t) => {
  const io = manager();
  const qq = channel('qq', CAPABILITY.TEXT | CAPABILITY.IMAGE);
  io.registerChannel(qq);
  t.same(
    io.channels().map((c) => c.name),
    ['qq'],
  );
  t.equal(io.channel('qq'), qq);

  expectError(t, () => io.registerChannel(channel('qq', CAPABILITY.TEXT)), 'HA_ERR_IO_DEFINITION');
  for (const bad of ['QQ', '1qq', 'q-q', '', 'a'.repeat(33), 'device/1']) {
    expectError(t, () => io.registerChannel(channel(bad, CAPABILITY.TEXT)), 'HA_ERR_IO_DEFINITION');
  }
  const longest = `a${'b'.repeat(31)}`;
  t.doesNotThrow(() => io.registerChannel(channel(longest, CAPABILITY.TEXT)), '32 characters is the limit');
  expectError(t, () => io.registerChannel(channel('none', 0)), 'HA_ERR_IO_DEFINITION');
  expectError(t, () => io.registerChannel(channel('toomuch', 64)), 'HA_ERR_IO_DEFINITION');
  expectError(t, () => io.registerChannel(channel('nobody', CAPABILITY.TEXT, { owner: '' })), 'HA_ERR_IO_DEFINITION');
  t.same(
    io.channels().map((c) => c.name),
    ['qq', longest],
    'failed registrations changed nothing',
  );
  t.equal(io.channel('qq'), qq, 'the refused duplicate did not replace the first qq');
});

t.test('a snapshot held by a reader stays the old consistent set across changes', async (t) => {
  const io = manager();
  io.registerChannel(channel('qq', CAPABILITY.TEXT, { owner: 'plugin:qq' }));
  io.registerChannel(channel('qq_group', CAPABILITY.TEXT, { owner: 'plugin:qq' }));
  const cli = channel('cli', CAPABILITY.TEXT, { owner: 'plugin:cli' });
  io.registerChannel(cli);
  const before = io.snapshot();
  const toolsBefore = io.tools();

  io.replaceOwner('plugin:qq', {
    channels: [channel('qq', CAPABILITY.TEXT | CAPABILITY.FILE, { owner: 'plugin:qq' })],
  });

  t.same([...before.channels.keys()], ['qq', 'qq_group', 'cli'], 'the old snapshot still has every channel');
  t.equal(before.channels.get('qq')?.capabilities, CAPABILITY.TEXT, 'with their old definitions');
  t.same(
    toolsBefore.map((d) => d.name),
    [
      'output_list_channels',
      'output_send__qq',
      'output_send__qq_help',
      'output_send__qq_group',
      'output_send__qq_group_help',
      'output_send__cli',
      'output_send__cli_help',
    ],
    'an old tool listing is unchanged',
  );
  const after = io.snapshot();
  t.not(after, before);
  t.same([...after.channels.keys()], ['cli', 'qq'], "only plugin:qq's channels were replaced");
  t.equal(after.channels.get('qq')?.capabilities, CAPABILITY.TEXT | CAPABILITY.FILE);
  t.equal(after.channels.get('cli'), cli, 'another owner keeps its channel object');

  // A refused reload (one bad channel) leaves the current set exactly as it was.
  expectError(
    t,
    () =>
      io.replaceOwner('plugin:qq', {
        channels: [channel('fine', CAPABILITY.TEXT, { owner: 'plugin:qq' }), channel('Bad', 1, { owner: 'plugin:qq' })],
      }),
    'HA_ERR_IO_DEFINITION',
  );
  expectError(
    t,
    () => io.replaceOwner('plugin:qq', { channels: [channel('stolen', CAPABILITY.TEXT, { owner: 'plugin:other' })] }),
    'HA_ERR_IO_DEFINITION',
  );
  t.equal(io.snapshot(), after, 'the same table object: nothing was swapped');
});

t.test('routes: explicit, then the channel named like the input channel, then like the source', async (t) => {
  const io = manager();
  io.registerChannel(channel('cli', CAPABILITY.TEXT));
  io.registerChannel(channel('webui', CAPABILITY.TEXT | CAPABILITY.IMAGE));
  io.registerChannel(channel('speaker', CAPABILITY.AUDIO));
  t.equal(io.route({ source: 'cli', channel: 'cli' }), 'cli');
  t.equal(io.route({ source: 'webui', channel: 'session-7' }), 'webui', 'falls back to the source name');
  t.equal(io.route({ source: 'plugin:x', channel: 'webui' }), 'webui', 'the input channel name wins over the source');
  t.equal(io.route({ source: 'mqtt', channel: 'kitchen' }), undefined, 'unknown');
  io.setRoute('mqtt', 'speaker');
  t.equal(io.route({ source: 'mqtt', channel: 'kitchen' }), 'speaker');
  io.setRoute('webui', 'cli');
  t.equal(io.route({ source: 'webui', channel: 'webui' }), 'cli', 'an explicit route beats the name match');
  io.unregisterChannel('cli');
  t.equal(io.route({ source: 'webui', channel: 'webui' }), 'webui', 'a route to a gone channel falls through');
  io.clearRoute('mqtt');
  t.equal(io.route({ source: 'mqtt', channel: 'kitchen' }), undefined);
  expectError(t, () => io.setRoute('x', 'Not A Channel'), 'HA_ERR_IO_DEFINITION');
});

t.test('routes: a channel that answers a conversation takes its answers, after a channel of that name', async (t) => {
  const io = manager();
  io.registerChannel({ ...channel('speaker', CAPABILITY.TEXT | CAPABILITY.AUDIO), answers: ['voice'] });
  io.registerChannel(channel('timer', CAPABILITY.TEXT));
  t.equal(io.route({ source: 'voice', channel: 'voice' }), 'speaker', 'a spoken turn is answered on the speaker');
  t.equal(io.route({ source: 'timer', channel: 'voice' }), 'speaker', 'so is a timer set by voice, whoever raises it');
  t.equal(io.route({ source: 'timer', channel: 'kitchen' }), 'timer', 'other conversations still fall back to the source');
  io.registerChannel(channel('voice', CAPABILITY.TEXT));
  t.equal(io.route({ source: 'timer', channel: 'voice' }), 'voice', 'a channel named like the conversation comes first');
  expectError(t, () => io.registerChannel({ ...channel('bad', CAPABILITY.TEXT), answers: [''] }), 'HA_ERR_IO_DEFINITION');
});

t.test('send checks that the channel exists and can carry the type', async (t) => {
  const io = manager();
  const cli = channel('cli', CAPABILITY.TEXT);
  io.registerChannel(cli);
  const event = (type: OutputEvent['type'], name = 'cli'): OutputEvent => ({
    id: 'o1',
    channel: name,
    type,
    payload: 'x',
    meta: {},
    created_at: 1,
  });
  await io.send(event('text'));
  t.equal(cli.sent.length, 1);
  await expectErrorAsync(t, () => io.send(event('text', 'nowhere')), 'HA_ERR_IO_CHANNEL_UNKNOWN');
  const error = await expectErrorAsync(t, () => io.send(event('image')), 'HA_ERR_IO_CAPABILITY');
  t.match(error.message, /cannot carry image; it carries text/);
  t.equal(cli.sent.length, 1, 'refused sends never reach the channel');
});

t.test('output_send tool: receipt exactly "ok", capability errors the model can read', async (t) => {
  const io = manager();
  const qq = channel('qq', CAPABILITY.TEXT | CAPABILITY.FILE | CAPABILITY.IMAGE | CAPABILITY.AUDIO);
  const speaker = channel('speaker', CAPABILITY.AUDIO);
  io.registerChannel(qq);
  io.registerChannel(speaker);
  const send = tool(io, 'output_send__qq');
  t.equal(send.owner, 'io');
  t.equal(send.parallel_safe, false, 'sends are not parallel-safe');
  t.match(send.parameters, {
    type: 'object',
    required: ['payload'],
    properties: { type: { enum: ['text', 'file', 'image', 'audio'], default: 'text' }, meta: { type: 'object' } },
  });
  t.match(tool(io, 'output_send__speaker').parameters, { properties: { type: { enum: ['audio'], default: 'audio' } } });

  const result = await send.execute({ payload: 'hello there' }, context());
  t.equal(result, 'ok', 'exactly the string "ok", no echo of the payload');
  t.equal(qq.sent.length, 1);
  t.match(qq.sent[0], { channel: 'qq', type: 'text', payload: 'hello there', created_at: 1_700_000_000_000 });
  t.match(qq.sent[0]?.meta, { task_id: 'task-1', input_source: 'qq', input_channel: 'chat-42' }, 'the channel learns which conversation');

  t.equal(await send.execute({ payload: '/tmp/a.png', type: 'image', meta: { caption: 'cat', task_id: 'forged' } }, context()), 'ok');
  t.match(qq.sent[1]?.meta, { caption: 'cat', task_id: 'task-1' }, 'model meta kept, context not overridable');

  const info = await toolError(t, () => send.execute({ payload: '{"a":1}', type: 'structured' }, context()));
  t.equal(info.reason, 'capability');
  t.equal(info.field, 'type');
  t.match(info.hint, /qq carries: text, file, image, audio/);

  const speakerInfo = await toolError(t, () => tool(io, 'output_send__speaker').execute({ payload: 'hi', type: 'text' }, context()));
  t.equal(speakerInfo.reason, 'capability');
  t.match(speakerInfo.hint, /carries: audio/);

  t.equal((await toolError(t, () => send.execute({}, context()))).reason, 'required');
  t.equal((await toolError(t, () => send.execute({ payload: '   ' }, context()))).reason, 'required');
  t.equal((await toolError(t, () => send.execute({ payload: { text: 'x' } }, context()))).reason, 'type');
  t.equal((await toolError(t, () => send.execute({ payload: 'x', type: 'video' }, context()))).reason, 'enum');
  t.equal(qq.sent.length, 2, 'no failed call reached the channel');

  const failing = channel('flaky', CAPABILITY.TEXT, {
    send: async () => {
      throw new Error('socket closed');
    },
  });
  io.registerChannel(failing);
  const failed = await toolError(t, () => tool(io, 'output_send__flaky').execute({ payload: 'x' }, context()));
  t.equal(failed.reason, 'failed');
  t.match(failed.detail, /socket closed/);
});

t.test('a send tool checks the channel as registered now, not when the listing was taken', async (t) => {
  const io = manager();
  io.registerChannel(channel('qq', CAPABILITY.TEXT | CAPABILITY.IMAGE, { owner: 'plugin:qq' }));
  const oldSend = tool(io, 'output_send__qq');
  const reloaded = channel('qq', CAPABILITY.TEXT, { owner: 'plugin:qq' });
  io.replaceOwner('plugin:qq', { channels: [reloaded] });
  t.equal((await toolError(t, () => oldSend.execute({ payload: 'x', type: 'image' }, context()))).reason, 'capability');
  t.equal(await oldSend.execute({ payload: 'x' }, context()), 'ok');
  t.equal(reloaded.sent.length, 1, 'delivered to the new channel object');
  io.removeOwner('plugin:qq');
  const gone = await toolError(t, () => oldSend.execute({ payload: 'x' }, context()));
  t.equal(gone.reason, 'not_found');
  t.match(gone.hint, /output_list_channels/);
});

t.test('help and list tools describe the channels; unregister removes the tools', async (t) => {
  const io = manager();
  const webui = channel('webui', CAPABILITY.TEXT | CAPABILITY.FILE | CAPABILITY.IMAGE, { synchronous: true, description: 'the web page' });
  const speaker = channel('speaker', CAPABILITY.AUDIO);
  io.registerChannel(webui);
  io.registerChannel(speaker);
  const help = tool(io, 'output_send__webui_help');
  t.equal(help.parallel_safe, true);
  t.same(await help.execute({}, context()), {
    name: 'webui',
    description: 'the web page',
    capabilities: ['text', 'file', 'image'],
    synchronous: true,
  });
  const list = tool(io, 'output_list_channels');
  t.equal(list.parallel_safe, true);
  t.same(await list.execute({}, context()), {
    channels: [
      { name: 'webui', description: 'the web page', capabilities: ['text', 'file', 'image'], synchronous: true },
      { name: 'speaker', description: 'the speaker channel', capabilities: ['audio'], synchronous: false },
    ],
  });
  t.match(tool(io, 'output_send__webui').description, /Synchronous channel/);

  const listing = io.tools();
  t.equal(io.tools(), listing, 'unchanged tables give the same listing (cheap per turn)');
  io.replaceOwner('plugin:test', { channels: [webui, speaker] });
  io.removeOwner('plugin:nobody');
  t.equal(io.tools(), listing, 'a change that leaves every channel as it was does not rebuild the tools');

  io.unregisterChannel('webui');
  t.same(
    io.tools().map((d) => d.name),
    ['output_list_channels', 'output_send__speaker', 'output_send__speaker_help'],
  );
  t.same(await list.execute({}, context()), {
    channels: [{ name: 'speaker', description: 'the speaker channel', capabilities: ['audio'], synchronous: false }],
  });
  t.ok(
    io.tools().every((d) => d.owner === 'io'),
    'all io tools are owned by io',
  );
  t.equal(io.owner, 'io');
});
