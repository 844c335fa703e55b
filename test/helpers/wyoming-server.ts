/**
 * A scripted Wyoming server for tests: a real TCP server speaking the real framing, written
 * independently of plugins/voice/wyoming-events.ts (its own small parser and writer) so a bug in
 * the client's framing cannot be hidden by the same bug here. It answers describe, transcribe and
 * synthesize from a script, records what it received, counts open connections, and can misbehave.
 */
import { createServer, type Server, type Socket } from 'node:net';

export type Misbehaviour = 'none' | 'close-early' | 'garbage' | 'silent' | 'error' | 'oversized';

export interface WyomingScript {
  info?: Record<string, unknown>;
  transcript?: { text: string; language?: string };
  synthesized?: { pcm: Buffer; rate: number; width: number; channels: number; chunkBytes: number };
  misbehave?: Misbehaviour;
}

export interface ReceivedAudio {
  language?: string;
  rate?: number;
  width?: number;
  channels?: number;
  totalBytes: number;
  chunkSizes: number[];
}

export interface ReceivedEvent {
  type: string;
  data: Record<string, unknown>;
  payloadLength: number;
}

export interface ScriptedWyomingServer {
  port: number;
  script: WyomingScript;
  /** Every event received, in order, over all connections. */
  events: ReceivedEvent[];
  transcriptions: ReceivedAudio[];
  connections: number;
  openConnections(): number;
  /** Resolves once no connection is open (at once if none is). */
  allClosed(): Promise<void>;
  close(): Promise<void>;
}

/** The wire form, built by hand: header line with data in a separate block, then the payload. */
export function frame(type: string, data?: Record<string, unknown>, payload?: Buffer): Buffer {
  const dataBytes = data ? Buffer.from(JSON.stringify(data)) : Buffer.alloc(0);
  const header = { type, version: '1.5.2', data_length: dataBytes.length, payload_length: payload?.length ?? 0 };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), dataBytes, payload ?? Buffer.alloc(0)]);
}

function parseEvents(buffer: Buffer): { events: ReceivedEvent[]; payloads: Buffer[]; rest: Buffer } {
  const events: ReceivedEvent[] = [];
  const payloads: Buffer[] = [];
  let rest = buffer;
  for (;;) {
    const newline = rest.indexOf('\n');
    if (newline < 0) break;
    const header = JSON.parse(rest.subarray(0, newline).toString()) as {
      type: string;
      data?: Record<string, unknown>;
      data_length?: number;
      payload_length?: number;
    };
    const dataLength = header.data_length ?? 0;
    const payloadLength = header.payload_length ?? 0;
    const start = newline + 1;
    if (rest.length < start + dataLength + payloadLength) break;
    const extra = dataLength > 0 ? JSON.parse(rest.subarray(start, start + dataLength).toString()) : {};
    events.push({ type: header.type, data: { ...(header.data ?? {}), ...extra }, payloadLength });
    payloads.push(rest.subarray(start + dataLength, start + dataLength + payloadLength));
    rest = rest.subarray(start + dataLength + payloadLength);
  }
  return { events, payloads, rest };
}

export async function startWyomingServer(script: WyomingScript = {}): Promise<ScriptedWyomingServer> {
  const open = new Set<Socket>();
  let closeWaiters: Array<() => void> = [];
  const state = {
    port: 0,
    script,
    events: [] as ReceivedEvent[],
    transcriptions: [] as ReceivedAudio[],
    connections: 0,
  };

  const answer = (socket: Socket, event: ReceivedEvent, current: ReceivedAudio | undefined): ReceivedAudio | undefined => {
    const misbehave = state.script.misbehave ?? 'none';
    const isQuestion = event.type === 'describe' || event.type === 'audio-stop' || event.type === 'synthesize';
    if (isQuestion && misbehave !== 'none') {
      if (misbehave === 'close-early') socket.end();
      else if (misbehave === 'garbage') socket.write('this is not json\n');
      else if (misbehave === 'error') socket.write(frame('error', { text: 'model not loaded', code: 'not-ready' }));
      else if (misbehave === 'oversized') socket.write(Buffer.from(`${JSON.stringify({ type: 'audio-chunk', payload_length: 1e9 })}\n`));
      return current;
    }
    if (event.type === 'describe') socket.write(frame('info', state.script.info ?? {}));
    if (event.type === 'transcribe') {
      const audio: ReceivedAudio = { totalBytes: 0, chunkSizes: [] };
      if (typeof event.data.language === 'string') audio.language = event.data.language;
      state.transcriptions.push(audio);
      return audio;
    }
    if (event.type === 'audio-start' && current) {
      current.rate = event.data.rate as number;
      current.width = event.data.width as number;
      current.channels = event.data.channels as number;
    }
    if (event.type === 'audio-stop') socket.write(frame('transcript', state.script.transcript ?? { text: '' }));
    if (event.type === 'synthesize') {
      const audio = state.script.synthesized ?? { pcm: Buffer.alloc(0), rate: 22050, width: 2, channels: 1, chunkBytes: 1024 };
      const format = { rate: audio.rate, width: audio.width, channels: audio.channels };
      const parts = [frame('audio-start', format)];
      for (let offset = 0; offset < audio.pcm.length; offset += audio.chunkBytes) {
        parts.push(frame('audio-chunk', format, audio.pcm.subarray(offset, offset + audio.chunkBytes)));
      }
      parts.push(frame('audio-stop', {}));
      socket.write(Buffer.concat(parts));
    }
    return current;
  };

  const server: Server = createServer((socket) => {
    state.connections += 1;
    open.add(socket);
    socket.on('close', () => {
      open.delete(socket);
      if (open.size === 0) {
        const waiters = closeWaiters;
        closeWaiters = [];
        for (const wake of waiters) wake();
      }
    });
    socket.on('error', () => {});
    let buffer: Buffer = Buffer.alloc(0);
    let current: ReceivedAudio | undefined;
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const { events, payloads, rest } = parseEvents(buffer);
      buffer = rest;
      events.forEach((event, index) => {
        state.events.push(event);
        if (event.type === 'audio-chunk' && current) {
          current.totalBytes += payloads[index]?.length ?? 0;
          current.chunkSizes.push(payloads[index]?.length ?? 0);
        }
        current = answer(socket, event, current);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  state.port = typeof address === 'object' && address ? address.port : 0;

  return Object.assign(state, {
    openConnections: () => open.size,
    allClosed: () => (open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => closeWaiters.push(resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  });
}
