/**
 * The Wyoming events a satellite session uses, on top of the framing in ../wyoming-events.ts: what
 * a satellite says (info, run-pipeline, detection, audio-chunk, played, ping) read into checked
 * shapes, and what HomeAgent says back (run-satellite, voice-started, transcript, synthesize, the
 * answer's audio, error). Every reader throws HA_ERR_VOICE_SATELLITE naming the field, so a
 * satellite that breaks the protocol is a coded problem, never an exception from deep inside.
 */
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { WyomingEvent } from '../wyoming-events.js';

/** The pipeline stages a satellite may ask for (wyoming's PipelineStage). */
export const PIPELINE_STAGES = ['wake', 'asr', 'intent', 'handle', 'tts'] as const;
export type PipelineStage = (typeof PIPELINE_STAGES)[number];

export interface RunPipeline {
  /** wake: the satellite streams all the time and HomeAgent listens for the wake phrase; asr: it heard its wake word. */
  start: 'wake' | 'asr';
  end: PipelineStage;
  wakeWord?: string;
}

export interface SatelliteInfo {
  name?: string;
  area?: string;
  wakeWords: string[];
}

export interface PcmFormat {
  rate: number;
  width: number;
  channels: number;
}

/** Codes the satellite's event service and Home Assistant use for a turn that heard nothing. */
export const NO_TEXT_CODE = 'stt-no-text-recognized';

export function satelliteError(problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_SATELLITE', problem);
}

/** What a satellite says about itself is kept for the status: clipped, so a long name cannot bloat it. */
const MAX_REPORTED_CHARS = 64;
const MAX_REPORTED_WAKE_WORDS = 16;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, MAX_REPORTED_CHARS) : undefined;
}

/** The `satellite` part of an info event (absent when the server is not a satellite). */
export function readSatelliteInfo(event: WyomingEvent): SatelliteInfo | undefined {
  const satellite = event.data.satellite;
  if (typeof satellite !== 'object' || satellite === null || Array.isArray(satellite)) return undefined;
  const fields = satellite as Record<string, unknown>;
  const words = Array.isArray(fields.active_wake_words)
    ? fields.active_wake_words
        .filter((w): w is string => typeof w === 'string')
        .slice(0, MAX_REPORTED_WAKE_WORDS)
        .map((w) => w.slice(0, MAX_REPORTED_CHARS))
    : [];
  const name = text(fields.name);
  const area = text(fields.area);
  return { ...(name ? { name } : {}), ...(area ? { area } : {}), wakeWords: words };
}

export function readRunPipeline(event: WyomingEvent): RunPipeline {
  const { start_stage: start, end_stage: end } = event.data;
  if (start !== 'wake' && start !== 'asr') {
    throw satelliteError(
      `run-pipeline starts at ${JSON.stringify(start)}; HomeAgent runs pipelines that start at wake or asr (the satellite's audio)`,
    );
  }
  if (typeof end !== 'string' || !(PIPELINE_STAGES as readonly string[]).includes(end)) {
    throw satelliteError(`run-pipeline has no valid end_stage (${JSON.stringify(end)})`);
  }
  const wakeWord = text(event.data.wake_word_name);
  return { start, end: end as PipelineStage, ...(wakeWord ? { wakeWord } : {}) };
}

/** The format fields of audio-start or audio-chunk. */
export function readPcmFormat(event: WyomingEvent): PcmFormat {
  const { rate, width, channels } = event.data;
  for (const [key, value] of [
    ['rate', rate],
    ['width', width],
    ['channels', channels],
  ] as const) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw satelliteError(`${event.type} has no valid ${key} (${JSON.stringify(value)})`);
    }
  }
  return { rate: rate as number, width: width as number, channels: channels as number };
}

/**
 * A chunk's PCM as 16-bit mono samples. The voice activity detector runs at 16 kHz; wyoming-satellite
 * sends 16 kHz 16-bit mono by default, and a second channel is mixed in rather than refused.
 */
export function chunkSamples(format: PcmFormat, payload: Buffer | undefined): Int16Array {
  if (format.rate !== 16000 || format.width !== 2 || format.channels > 2) {
    throw satelliteError(
      `audio is ${format.rate} Hz, ${format.width * 8}-bit, ${format.channels} channel(s); a satellite must send 16000 Hz 16-bit mono or stereo (wyoming-satellite --mic-command arecord -r 16000 -c 1 -f S16_LE -t raw)`,
    );
  }
  const bytes = payload ?? Buffer.alloc(0);
  const frame = format.width * format.channels;
  if (bytes.length % frame !== 0)
    throw satelliteError(`an audio chunk of ${bytes.length} bytes is not a whole number of ${frame}-byte frames`);
  const frames = bytes.length / frame;
  const samples = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    if (format.channels === 1) samples[i] = bytes.readInt16LE(i * 2);
    else samples[i] = Math.round((bytes.readInt16LE(i * 4) + bytes.readInt16LE(i * 4 + 2)) / 2);
  }
  return samples;
}

export function event(type: string, data: Record<string, unknown> = {}, payload?: Buffer): WyomingEvent {
  return payload ? { type, data, payload } : { type, data };
}

/**
 * A WAV's PCM as audio-start, audio-chunk… and audio-stop; `chunkBytes` is rounded down to whole
 * frames so no chunk splits a sample.
 */
export function audioEvents(pcm: Buffer, format: PcmFormat, chunkBytes: number): WyomingEvent[] {
  const frame = format.width * format.channels;
  const step = Math.max(frame, chunkBytes - (chunkBytes % frame));
  const fields = { rate: format.rate, width: format.width, channels: format.channels };
  const events: WyomingEvent[] = [event('audio-start', { ...fields, timestamp: 0 })];
  for (let offset = 0; offset < pcm.length; offset += step) {
    events.push(
      event(
        'audio-chunk',
        { ...fields, timestamp: Math.round((offset / frame / format.rate) * 1000) },
        pcm.subarray(offset, offset + step),
      ),
    );
  }
  events.push(event('audio-stop', { timestamp: Math.round((pcm.length / frame / format.rate) * 1000) }));
  return events;
}
