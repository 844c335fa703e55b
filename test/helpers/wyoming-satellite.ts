/**
 * A scripted Wyoming satellite for tests: a real TCP server that behaves like wyoming-satellite
 * with a local wake word (one client at a time; `describe` → `info` with a satellite section;
 * pings answered; after `run-satellite` it may "hear its wake word": detection, run-pipeline with
 * start_stage asr, then the command's audio as audio-chunk events; it reports `played` after the
 * answer's audio-stop). It parses and writes the framing itself (frame() from wyoming-server.ts,
 * its own reader), so a framing bug in the plugin cannot hide behind the same bug here. It can also
 * go away (drop the client, stop listening) and misbehave on demand (raw bytes).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { frame } from './wyoming-server.js';

export interface SatelliteEvent {
  type: string;
  data: Record<string, unknown>;
  payload: Buffer;
}

export interface ScriptedSatelliteOptions {
  name?: string;
  area?: string;
  wakeWords?: string[];
  /** Answer the plugin's pings (default true); false lets its pong deadline run out. */
  answerPings?: boolean;
  /** Send `played` after the answer's audio-stop (default true). */
  reportPlayed?: boolean;
  /** Listen on this port (a satellite coming back at its address); default a free one. */
  port?: number;
}

function readEvents(buffer: Buffer): { events: SatelliteEvent[]; rest: Buffer } {
  const events: SatelliteEvent[] = [];
  let rest = buffer;
  for (;;) {
    const newline = rest.indexOf(0x0a);
    if (newline < 0) break;
    const header = JSON.parse(rest.subarray(0, newline).toString('utf8')) as {
      type: string;
      data?: Record<string, unknown>;
      data_length?: number;
      payload_length?: number;
    };
    const start = newline + 1;
    const dataLength = header.data_length ?? 0;
    const payloadLength = header.payload_length ?? 0;
    if (rest.length < start + dataLength + payloadLength) break;
    const extra = dataLength > 0 ? (JSON.parse(rest.subarray(start, start + dataLength).toString('utf8')) as Record<string, unknown>) : {};
    const payload = Buffer.from(rest.subarray(start + dataLength, start + dataLength + payloadLength));
    events.push({ type: header.type, data: { ...(header.data ?? {}), ...extra }, payload });
    rest = rest.subarray(start + dataLength + payloadLength);
  }
  return { events, rest };
}

export class ScriptedSatellite {
  port = 0;
  /** Everything HomeAgent sent, over all connections, in order. */
  readonly received: SatelliteEvent[] = [];
  connections = 0;
  readonly #options: ScriptedSatelliteOptions;
  #server: Server | undefined;
  #client: Socket | undefined;
  #waiters: Array<() => void> = [];

  constructor(options: ScriptedSatelliteOptions = {}) {
    this.#options = options;
  }

  static async start(options: ScriptedSatelliteOptions = {}): Promise<ScriptedSatellite> {
    const satellite = new ScriptedSatellite(options);
    await satellite.listen(options.port ?? 0);
    return satellite;
  }

  get connected(): boolean {
    return this.#client !== undefined && !this.#client.destroyed;
  }

  async listen(port = this.port): Promise<void> {
    const server = createServer((socket) => this.#accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    this.#server = server;
  }

  /** Stops listening and drops the client: the satellite is gone (its port refuses). */
  async goAway(): Promise<void> {
    this.dropClient();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Closes the connection abruptly, as a satellite that rebooted. */
  dropClient(): void {
    this.#client?.destroy();
    this.#client = undefined;
  }

  async close(): Promise<void> {
    await this.goAway();
  }

  /** Writes raw bytes to the connected plugin (malformed frames). */
  sendRaw(bytes: Buffer | string): void {
    this.#client?.write(bytes);
  }

  send(type: string, data?: Record<string, unknown>, payload?: Buffer): void {
    this.#client?.write(frame(type, data, payload));
  }

  /**
   * The satellite heard its wake word: detection, run-pipeline (asr → tts), the command's audio in
   * 1024-sample chunks, then audio-stop when asked. With startStage wake: run-pipeline from wake and the audio.
   */
  wake(samples: Int16Array, options: { wakeWord?: string; audioStop?: boolean; rate?: number; startStage?: 'asr' | 'wake' } = {}): void {
    const name = options.wakeWord ?? 'hey_jarvis';
    const rate = options.rate ?? 16000;
    // Without a local wake word (start stage wake) the satellite streams from the start and the server listens for the wake word.
    const local = (options.startStage ?? 'asr') === 'asr';
    if (local) this.send('detection', { name, timestamp: 0 });
    this.send('run-pipeline', {
      start_stage: local ? 'asr' : 'wake',
      end_stage: 'tts',
      ...(local ? { wake_word_name: name } : {}),
      restart_on_end: !local,
      snd_format: { rate: 22050, width: 2, channels: 1 },
    });
    const pcm = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
    const step = 1024 * 2;
    for (let offset = 0; offset < pcm.length; offset += step) {
      this.send('audio-chunk', { rate, width: 2, channels: 1, timestamp: offset / 32 }, pcm.subarray(offset, offset + step));
    }
    if (options.audioStop) this.send('audio-stop', { timestamp: pcm.length / 32 });
  }

  /** Resolves with the first event of `type` received at or after index `from` of `received`. */
  async next(type: string, from = 0, timeoutMs = 15_000): Promise<SatelliteEvent & { index: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex((e, i) => i >= from && e.type === type);
      if (index >= 0) return { ...(this.received[index] as SatelliteEvent), index };
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the satellite received no ${type} (got ${this.received.map((e) => e.type).join(', ')})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Types received since `from`, in order (audio chunks counted once per run). */
  typesSince(from: number): string[] {
    const types: string[] = [];
    for (const e of this.received.slice(from)) if (types.at(-1) !== e.type || e.type !== 'audio-chunk') types.push(e.type);
    return types;
  }

  #accept(socket: Socket): void {
    this.connections++;
    // One client at a time, as wyoming-satellite: a new connection replaces the old one.
    this.#client?.destroy();
    this.#client = socket;
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.#client === socket) this.#client = undefined;
    });
    let buffer: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const { events, rest } = readEvents(buffer);
      buffer = rest;
      for (const received of events) this.#handle(socket, received);
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    });
  }

  #handle(socket: Socket, received: SatelliteEvent): void {
    this.received.push(received);
    if (received.type === 'describe') {
      socket.write(
        frame('info', {
          satellite: {
            name: this.#options.name ?? 'scripted satellite',
            area: this.#options.area ?? 'Kitchen',
            active_wake_words: this.#options.wakeWords ?? ['hey_jarvis'],
            has_vad: false,
            installed: true,
            attribution: { name: '', url: '' },
            description: 'a test satellite',
            version: '1.4.1',
          },
          wake: [],
        }),
      );
    } else if (received.type === 'ping' && this.#options.answerPings !== false) {
      socket.write(frame('pong', { text: received.data.text }));
    } else if (received.type === 'audio-stop' && this.#options.reportPlayed !== false) {
      socket.write(frame('played'));
    }
  }
}
