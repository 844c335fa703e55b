/**
 * A scripted OpenAI-compatible audio server on loopback for the speech back end tests. It speaks
 * the real /v1/audio/transcriptions (a multipart/form-data body, parsed here for real: the file
 * must be a PCM WAV whose sizes match its bytes, model is required) and /v1/audio/speech (JSON in,
 * a WAV out), records every request, and fails like the real service on demand: 401 with OpenAI's
 * error JSON, 500, a request that never gets an answer, a malformed body. Its WAV reading and
 * writing is its own, so a bug in plugins/voice/wav.ts cannot hide behind the same bug here.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pcmToWav } from '../../plugins/voice/wav.js';

export interface TestWav {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** PCM bytes declared in the data chunk. */
  dataLength: number;
}

export interface FormFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
  /** The file read as a WAV, or the reason it is not one. */
  wav: TestWav | { problem: string };
}

export interface AudioRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Text fields of a multipart form. */
  fields: Record<string, string>;
  file?: FormFile;
  /** A JSON body, parsed. */
  // biome-ignore lint/suspicious/noExplicitAny: recorded bodies are inspected freely in tests.
  json?: any;
}

export type AudioStep =
  | { transcript: string; language?: string }
  | { wav: Buffer; contentType?: string }
  | { status: number; message?: string; body?: string }
  | { hang: true }
  | { malformed: string; contentType?: string };

export interface OpenAiAudioServer {
  /** The base URL, ending in /v1. */
  baseUrl: string;
  requests: AudioRequest[];
  /** Answers for the next requests, in order; an empty queue answers with the defaults. */
  enqueue(...steps: AudioStep[]): void;
  /** Requests with another Bearer token get OpenAI's 401. Empty: any or none. */
  apiKey: string;
  defaultTranscript: string;
  defaultWav: Buffer;
  close(): Promise<void>;
}

/** A 16-bit PCM WAV; `unknownSizes` writes 0xFFFFFFFF sizes the way streaming servers do. */
export function buildWav(pcm: Buffer, sampleRate: number, options: { channels?: number; unknownSizes?: boolean } = {}): Buffer {
  const wav = pcmToWav(pcm, sampleRate, options.channels ?? 1);
  if (options.unknownSizes) {
    wav.writeUInt32LE(0xffffffff, 4);
    wav.writeUInt32LE(0xffffffff, 40);
  }
  return wav;
}

/** A tone, so audio is not all zeros. */
export function tonePcm(ms: number, sampleRate: number): Buffer {
  const samples = Math.round((ms / 1000) * sampleRate);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate)), i * 2);
  return pcm;
}

/** Strict reading of a canonical 44-byte-header WAV, as an upload from the client must be. */
export function readTestWav(bytes: Buffer): TestWav | { problem: string } {
  if (bytes.length < 44) return { problem: `${bytes.length} bytes is shorter than a WAV header` };
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 16) !== 'WAVEfmt ')
    return { problem: 'no RIFF/WAVE/fmt header' };
  if (bytes.readUInt16LE(20) !== 1) return { problem: 'not PCM' };
  if (bytes.toString('ascii', 36, 40) !== 'data') return { problem: 'no data chunk at byte 36' };
  const dataLength = bytes.readUInt32LE(40);
  if (bytes.readUInt32LE(4) !== bytes.length - 8) return { problem: `RIFF size ${bytes.readUInt32LE(4)} for ${bytes.length} bytes` };
  if (dataLength !== bytes.length - 44) return { problem: `data size ${dataLength} for ${bytes.length - 44} bytes of PCM` };
  return { sampleRate: bytes.readUInt32LE(24), channels: bytes.readUInt16LE(22), bitsPerSample: bytes.readUInt16LE(34), dataLength };
}

interface Part {
  name: string;
  filename?: string;
  contentType: string;
  body: Buffer;
}

function parseMultipart(body: Buffer, contentType: string): Part[] | string {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) return 'no multipart boundary';
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let position = body.indexOf(delimiter);
  if (position < 0) return 'no first boundary';
  for (;;) {
    position += delimiter.length;
    if (body.subarray(position, position + 2).toString() === '--') return parts;
    position += 2; // CRLF after the boundary line
    const headerEnd = body.indexOf('\r\n\r\n', position);
    if (headerEnd < 0) return 'a part has no header end';
    const headers = body.subarray(position, headerEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next < 0) return 'a part has no closing boundary';
    const disposition = /content-disposition:[^\r\n]*\bname="([^"]*)"(?:;\s*filename="([^"]*)")?/i.exec(headers);
    if (!disposition) return 'a part has no Content-Disposition name';
    const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? 'text/plain';
    const part: Part = { name: disposition[1] ?? '', contentType: type, body: body.subarray(headerEnd + 4, next) };
    if (disposition[2] !== undefined) part.filename = disposition[2];
    parts.push(part);
    position = next + 2;
  }
}

function openAiError(message: string, type: string, code: string | null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

export async function startOpenAiAudioServer(): Promise<OpenAiAudioServer> {
  const queue: AudioStep[] = [];
  const state: OpenAiAudioServer = {
    baseUrl: '',
    requests: [],
    enqueue: (...steps) => void queue.push(...steps),
    apiKey: '',
    defaultTranscript: 'turn on the kitchen light',
    defaultWav: buildWav(tonePcm(500, 24000), 24000),
    close: async () => {},
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = request.url ?? '';
      const recorded: AudioRequest = { method: request.method ?? '', path, headers: request.headers, fields: {} };
      state.requests.push(recorded);
      const contentType = request.headers['content-type'] ?? '';
      const send = (status: number, text: string | Buffer, type = 'application/json'): void => {
        response.writeHead(status, { 'content-type': type });
        response.end(text);
      };

      if (state.apiKey && request.headers.authorization !== `Bearer ${state.apiKey}`) {
        const shown = (request.headers.authorization ?? '').replace(/^Bearer /, '');
        const masked = shown.length > 8 ? `${shown.slice(0, 3)}*****${shown.slice(-4)}` : shown;
        send(401, openAiError(`Incorrect API key provided: ${masked}.`, 'invalid_request_error', 'invalid_api_key'));
        return;
      }
      if (path === '/v1/audio/transcriptions') {
        const parts = parseMultipart(body, contentType);
        if (typeof parts === 'string') {
          send(400, openAiError(`Could not parse multipart form: ${parts}`, 'invalid_request_error', null));
          return;
        }
        for (const part of parts) {
          if (part.filename === undefined) recorded.fields[part.name] = part.body.toString('utf8');
          else if (part.name === 'file') {
            recorded.file = {
              filename: part.filename,
              contentType: part.contentType,
              bytes: Buffer.from(part.body),
              wav: readTestWav(part.body),
            };
          }
        }
        if (!recorded.fields.model?.trim()) {
          send(400, openAiError('you must provide a model parameter', 'invalid_request_error', null));
          return;
        }
        if (!recorded.file || 'problem' in recorded.file.wav) {
          const why = recorded.file && 'problem' in recorded.file.wav ? recorded.file.wav.problem : 'no file';
          send(400, openAiError(`Invalid file format: ${why}`, 'invalid_request_error', null));
          return;
        }
      } else if (path === '/v1/audio/speech') {
        try {
          recorded.json = JSON.parse(body.toString('utf8'));
        } catch {
          send(400, openAiError('We could not parse the JSON body of your request.', 'invalid_request_error', null));
          return;
        }
        const missing = ['model', 'input', 'voice'].find((key) => typeof recorded.json?.[key] !== 'string');
        if (missing) {
          send(400, openAiError(`Missing required parameter: '${missing}'.`, 'invalid_request_error', 'missing_required_parameter'));
          return;
        }
      } else {
        send(404, openAiError(`Invalid URL (${request.method} ${path})`, 'invalid_request_error', null));
        return;
      }

      const step = queue.shift();
      if (!step) {
        if (path === '/v1/audio/speech') send(200, state.defaultWav, 'audio/wav');
        else send(200, JSON.stringify({ text: state.defaultTranscript }));
      } else if ('hang' in step) {
        // Never answers: the client's timeout must end the call.
      } else if ('transcript' in step) {
        send(200, JSON.stringify(step.language ? { text: step.transcript, language: step.language } : { text: step.transcript }));
      } else if ('wav' in step) {
        send(200, step.wav, step.contentType ?? 'audio/wav');
      } else if ('malformed' in step) {
        send(200, step.malformed, step.contentType ?? 'application/json');
      } else {
        send(
          step.status,
          step.body ?? openAiError(step.message ?? 'The server had an error while processing your request.', 'server_error', null),
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
