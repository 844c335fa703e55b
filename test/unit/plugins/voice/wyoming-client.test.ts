import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import { WyomingClient } from '../../../../plugins/voice/wyoming-client.js';
import { encodeEvent, MAX_HEADER_BYTES, type WyomingEvent, WyomingEventDecoder } from '../../../../plugins/voice/wyoming-events.js';
import { HomeAgentError } from '../../../../src/sdk/index.js';
import { frame, type ScriptedWyomingServer, startWyomingServer } from '../../../helpers/wyoming-server.js';

const INFO = {
  asr: [{ name: 'faster-whisper', installed: true, models: [{ name: 'tiny-int8', languages: ['en', 'zh'] }] }],
  tts: [{ name: 'piper', installed: true, voices: [{ name: 'en_US-lessac-medium', languages: ['en_US'] }] }],
};

function decodeAll(bytes: Buffer, maxPayload = 1024): WyomingEvent[] {
  return new WyomingEventDecoder(maxPayload).push(bytes);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function withServer(t: Test, script: Parameters<typeof startWyomingServer>[0]): Promise<ScriptedWyomingServer> {
  const server = await startWyomingServer(script);
  t.teardown(() => server.close());
  return server;
}

t.test('framing', async (t) => {
  t.test('header with data_length and payload_length round-trips', async (t) => {
    const payload = Buffer.from([0, 1, 2, 255, 10, 13]);
    const bytes = encodeEvent({ type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload });
    const headerLine = bytes.subarray(0, bytes.indexOf(0x0a)).toString();
    const header = JSON.parse(headerLine);
    t.equal(header.type, 'audio-chunk');
    t.equal(header.payload_length, 6);
    t.equal(header.data_length, Buffer.byteLength(JSON.stringify({ rate: 16000, width: 2, channels: 1 })));
    const [event] = decodeAll(bytes);
    t.same(event?.data, { rate: 16000, width: 2, channels: 1 });
    t.same(event?.payload, payload);
  });

  t.test('an event without data or payload has neither length', async (t) => {
    const bytes = encodeEvent({ type: 'describe', data: {} });
    const header = JSON.parse(bytes.toString().trim());
    t.equal(header.data_length, undefined);
    t.equal(header.payload_length, undefined);
    t.same(decodeAll(bytes), [{ type: 'describe', data: {} }]);
  });

  t.test('inline data in the header is merged with the data block', async (t) => {
    const block = Buffer.from(JSON.stringify({ text: 'hello', language: 'en' }));
    const header = `${JSON.stringify({ type: 'transcript', data: { text: 'old', extra: 1 }, data_length: block.length })}\n`;
    const [event] = decodeAll(Buffer.concat([Buffer.from(header), block]));
    t.same(event?.data, { text: 'hello', extra: 1, language: 'en' });
  });

  t.test('unicode data survives', async (t) => {
    const [event] = decodeAll(encodeEvent({ type: 'transcript', data: { text: '打开客厅的灯' } }));
    t.equal(event?.data.text, '打开客厅的灯');
  });

  t.test('split across packets byte by byte', async (t) => {
    const bytes = Buffer.concat([
      encodeEvent({ type: 'audio-start', data: { rate: 22050, width: 2, channels: 1 } }),
      encodeEvent({ type: 'audio-chunk', data: { rate: 22050 }, payload: Buffer.from('abcdef\n{') }),
      encodeEvent({ type: 'audio-stop', data: {} }),
    ]);
    const decoder = new WyomingEventDecoder(1024);
    const events: WyomingEvent[] = [];
    for (const byte of bytes) events.push(...decoder.push(Buffer.from([byte])));
    t.same(
      events.map((event) => event.type),
      ['audio-start', 'audio-chunk', 'audio-stop'],
    );
    t.same(events[1]?.payload, Buffer.from('abcdef\n{'));
  });

  t.test('several events in one packet', async (t) => {
    const bytes = Buffer.concat([frame('info', INFO), frame('transcript', { text: 'hi' }), frame('audio-stop')]);
    const events = decodeAll(bytes);
    t.same(
      events.map((event) => event.type),
      ['info', 'transcript', 'audio-stop'],
    );
    t.equal(events[1]?.data.text, 'hi');
  });

  t.test('malformed headers are refused with the problem named', async (t) => {
    const cases: Array<[string, RegExp]> = [
      ['not json\n', /not JSON/],
      ['[1,2]\n', /not a JSON object/],
      ['{"data":{}}\n', /no type/],
      ['{"type":"x","data":[1]}\n', /data of "x" is not an object/],
      ['{"type":"x","payload_length":-1}\n', /payload_length is not a non-negative integer/],
      ['{"type":"x","data_length":"3"}\n', /data_length is not a non-negative integer/],
      ['{"type":"x","data_length":2}\n[]', /data block of "x": not a JSON object/],
    ];
    for (const [text, message] of cases) {
      t.throws(() => decodeAll(Buffer.from(text)), { code: 'HA_ERR_VOICE_WYOMING', message }, JSON.stringify(text));
    }
  });

  t.test('a header line that never ends is refused', async (t) => {
    t.throws(() => decodeAll(Buffer.alloc(MAX_HEADER_BYTES + 1, 0x41)), { code: 'HA_ERR_VOICE_WYOMING', message: /no end of line/ });
  });

  t.test('a payload over the limit is refused from the header alone', async (t) => {
    const header = Buffer.from(`${JSON.stringify({ type: 'audio-chunk', payload_length: 1025 })}\n`);
    t.throws(() => decodeAll(header, 1024), { code: 'HA_ERR_VOICE_WYOMING', message: /1025-byte payload, over the limit of 1024/ });
    t.equal(
      decodeAll(
        Buffer.concat([Buffer.from(`${JSON.stringify({ type: 'audio-chunk', payload_length: 1024 })}\n`), Buffer.alloc(1024)]),
        1024,
      ).length,
      1,
    );
  });
});

t.test('describe returns the programs, models and languages', async (t) => {
  const server = await withServer(t, { info: INFO });
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port, timeoutMs: 5000 });
  const info = await client.describe();
  t.same(info, {
    asr: [{ name: 'faster-whisper', models: [{ name: 'tiny-int8', languages: ['en', 'zh'] }] }],
    tts: [{ name: 'piper', models: [{ name: 'en_US-lessac-medium', languages: ['en_US'] }] }],
  });
  await server.allClosed();
  t.equal(server.openConnections(), 0, 'the server saw the connection close');
  t.equal(server.connections, 1);
});

t.test('describe tolerates a server with no programs', async (t) => {
  const server = await withServer(t, { info: { asr: 'nonsense' } });
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port });
  t.same(await client.describe(), { asr: [], tts: [] });
});

t.test('transcribe sends the audio in chunks of at most one second', async (t) => {
  const server = await withServer(t, { transcript: { text: 'turn on the kitchen light', language: 'en' } });
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port, timeoutMs: 5000 });
  const oneSecond = 16000 * 2;
  const pcm = Buffer.alloc(oneSecond * 2 + 100, 7);
  const result = await client.transcribe(pcm, { rate: 16000, width: 2, channels: 1, language: 'en' });
  t.same(result, { text: 'turn on the kitchen light', language: 'en' });
  t.same(server.transcriptions, [
    { language: 'en', rate: 16000, width: 2, channels: 1, totalBytes: pcm.length, chunkSizes: [oneSecond, oneSecond, 100] },
  ]);
  t.same(
    server.events.map((event) => event.type),
    ['transcribe', 'audio-start', 'audio-chunk', 'audio-chunk', 'audio-chunk', 'audio-stop'],
  );
  await server.allClosed();
  t.equal(server.openConnections(), 0);
});

t.test('transcribe without a language sends none and returns none', async (t) => {
  const server = await withServer(t, { transcript: { text: 'hello' } });
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port });
  t.same(await client.transcribe(Buffer.alloc(10), { rate: 8000, width: 1, channels: 1 }), { text: 'hello' });
  t.same(server.events[0], { type: 'transcribe', data: {}, payloadLength: 0 });
});

t.test('transcribe refuses a bad audio format before connecting', async (t) => {
  const server = await withServer(t, {});
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port });
  t.throws(() => client.transcribe(Buffer.alloc(10), { rate: 0, width: 2, channels: 1 }), {
    code: 'HA_ERR_VOICE_WYOMING',
    message: `Wyoming server 127.0.0.1:${server.port}: audio rate must be a positive integer, got 0`,
  });
  t.equal(server.connections, 0);
});

t.test('synthesize collects the chunks', async (t) => {
  const pcm = Buffer.from(Array.from({ length: 5000 }, (_, index) => index % 256));
  const server = await withServer(t, { synthesized: { pcm, rate: 22050, width: 2, channels: 1, chunkBytes: 1024 } });
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port, timeoutMs: 5000 });
  const audio = await client.synthesize('The light is on.', { voice: 'en_US-lessac-medium', language: 'en_US' });
  t.same(audio, { pcm, rate: 22050, width: 2, channels: 1 });
  t.same(server.events, [
    { type: 'synthesize', data: { text: 'The light is on.', voice: { name: 'en_US-lessac-medium', language: 'en_US' } }, payloadLength: 0 },
  ]);
  await server.allClosed();
  t.equal(server.openConnections(), 0);
});

t.test('synthesize without a voice sends only the text', async (t) => {
  const server = await withServer(t, {});
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port });
  const audio = await client.synthesize('hi');
  t.same(audio, { pcm: Buffer.alloc(0), rate: 22050, width: 2, channels: 1 });
  t.same(server.events[0]?.data, { text: 'hi' });
});

t.test('synthesized audio over the limit in total is refused', async (t) => {
  const server = await withServer(t, { synthesized: { pcm: Buffer.alloc(3000), rate: 16000, width: 2, channels: 1, chunkBytes: 1000 } });
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port, maxPayloadBytes: 2500 });
  await t.rejects(client.synthesize('long'), {
    code: 'HA_ERR_VOICE_WYOMING',
    message: `Wyoming server 127.0.0.1:${server.port}: synthesized audio is over the limit of 2500 bytes`,
  });
  await server.allClosed();
  t.equal(server.openConnections(), 0);
});

t.test('failures name host:port and the problem, and close the connection', async (t) => {
  const cases: Array<[string, 'close-early' | 'garbage' | 'silent' | 'error' | 'oversized', RegExp]> = [
    ['server error event', 'error', /reported an error during describe: model not loaded \(not-ready\)/],
    ['malformed header', 'garbage', /malformed event header: not JSON/],
    ['oversized payload', 'oversized', /1000000000-byte payload, over the limit of 4096 bytes/],
    ['closed early', 'close-early', /closed the connection before answering describe/],
    ['never answers', 'silent', /no answer to describe within 50 ms/],
  ];
  for (const [name, misbehave, problem] of cases) {
    t.test(name, async (t) => {
      const server = await withServer(t, { info: INFO, misbehave });
      const client = new WyomingClient({
        host: '127.0.0.1',
        port: server.port,
        timeoutMs: misbehave === 'silent' ? 50 : 10_000,
        maxPayloadBytes: 4096,
      });
      const error = await client.describe().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      t.ok(error instanceof HomeAgentError, 'a HomeAgentError');
      t.equal((error as HomeAgentError).code, 'HA_ERR_VOICE_WYOMING');
      t.match((error as HomeAgentError).message, `Wyoming server 127.0.0.1:${server.port}: `);
      t.match((error as HomeAgentError).message, problem);
      await server.allClosed();
      t.equal(server.openConnections(), 0, 'the server saw the connection close');
    });
  }
});

t.test('transcribe and synthesize fail the same way', async (t) => {
  const server = await withServer(t, { misbehave: 'error' });
  const client = new WyomingClient({ host: '127.0.0.1', port: server.port, timeoutMs: 5000 });
  await t.rejects(client.transcribe(Buffer.alloc(4), { rate: 16000, width: 2, channels: 1 }), {
    code: 'HA_ERR_VOICE_WYOMING',
    message: /reported an error during transcribe: model not loaded/,
  });
  await t.rejects(client.synthesize('x'), {
    code: 'HA_ERR_VOICE_WYOMING',
    message: /reported an error during synthesize: model not loaded/,
  });
  await server.allClosed();
  t.equal(server.openConnections(), 0);
});

t.test('connection refused names host:port', async (t) => {
  const port = await freePort();
  const client = new WyomingClient({ host: '127.0.0.1', port, timeoutMs: 5000 });
  await t.rejects(client.describe(), {
    code: 'HA_ERR_VOICE_WYOMING',
    message: `Wyoming server 127.0.0.1:${port}: describe failed: connection refused`,
  });
});

t.test('a port out of range is the same coded failure, not a RangeError', async (t) => {
  const client = new WyomingClient({ host: '127.0.0.1', port: 70000, timeoutMs: 5000 });
  await t.rejects(client.describe(), { code: 'HA_ERR_VOICE_WYOMING', message: /^Wyoming server 127\.0\.0\.1:70000: describe failed: / });
});
