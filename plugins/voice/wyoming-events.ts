/**
 * Wyoming event framing (the protocol of Home Assistant's faster-whisper and piper servers).
 * Each event is one JSON header line ending in "\n" (type, optional inline data, data_length,
 * payload_length, version), then data_length bytes of UTF-8 JSON merged into the data, then
 * payload_length bytes of binary payload (audio). Kept apart from the client so the byte-level
 * rules can be tested on their own, including events split across TCP packets.
 */
import { HomeAgentError } from '../../src/sdk/index.js';

export const WYOMING_VERSION = '1.5.2';
/** A header line is a small JSON object; a longer line means we are not talking to a Wyoming server. */
export const MAX_HEADER_BYTES = 64 * 1024;
const MAX_DATA_BYTES = 1024 * 1024;

export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

function framingError(problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_WYOMING', problem);
}

/** One event as bytes; data goes in a separate data block (as the reference servers send it). */
export function encodeEvent(event: WyomingEvent): Buffer {
  const hasData = Object.keys(event.data).length > 0;
  const dataBytes = hasData ? Buffer.from(JSON.stringify(event.data), 'utf8') : undefined;
  const header: Record<string, unknown> = { type: event.type, version: WYOMING_VERSION };
  if (dataBytes) header.data_length = dataBytes.length;
  if (event.payload && event.payload.length > 0) header.payload_length = event.payload.length;
  const parts: Buffer[] = [Buffer.from(`${JSON.stringify(header)}\n`, 'utf8')];
  if (dataBytes) parts.push(dataBytes);
  if (event.payload && event.payload.length > 0) parts.push(event.payload);
  return Buffer.concat(parts);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lengthField(header: Record<string, unknown>, name: string): number {
  const value = header[name];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw framingError(`malformed event header: ${name} is not a non-negative integer`);
  }
  return value;
}

interface PendingEvent {
  type: string;
  data: Record<string, unknown>;
  dataLength: number;
  payloadLength: number;
}

/**
 * Turns a byte stream into events. push() takes whatever the socket delivered (any split) and
 * returns the events completed by it; a malformed header or a payload over the limit throws.
 */
export class WyomingEventDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: PendingEvent | undefined;

  constructor(private readonly maxPayloadBytes: number) {}

  push(chunk: Buffer): WyomingEvent[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const events: WyomingEvent[] = [];
    for (;;) {
      if (!this.pending) {
        const newline = this.buffer.indexOf(0x0a);
        if (newline < 0) {
          if (this.buffer.length > MAX_HEADER_BYTES)
            throw framingError(`malformed event header: no end of line within ${MAX_HEADER_BYTES} bytes`);
          return events;
        }
        this.pending = this.parseHeader(this.buffer.subarray(0, newline));
        this.buffer = this.buffer.subarray(newline + 1);
      }
      const { dataLength, payloadLength } = this.pending;
      if (this.buffer.length < dataLength + payloadLength) return events;
      events.push(
        this.finish(this.pending, this.buffer.subarray(0, dataLength), this.buffer.subarray(dataLength, dataLength + payloadLength)),
      );
      this.buffer = this.buffer.subarray(dataLength + payloadLength);
      this.pending = undefined;
    }
  }

  private parseHeader(line: Buffer): PendingEvent {
    let header: unknown;
    try {
      header = JSON.parse(line.toString('utf8'));
    } catch {
      throw framingError(`malformed event header: not JSON (${JSON.stringify(line.subarray(0, 80).toString('utf8'))})`);
    }
    if (!isPlainObject(header)) throw framingError('malformed event header: not a JSON object');
    if (typeof header.type !== 'string' || header.type === '') throw framingError('malformed event header: no type');
    if (header.data !== undefined && header.data !== null && !isPlainObject(header.data)) {
      throw framingError(`malformed event header: data of "${header.type}" is not an object`);
    }
    const dataLength = lengthField(header, 'data_length');
    const payloadLength = lengthField(header, 'payload_length');
    if (dataLength > MAX_DATA_BYTES)
      throw framingError(`event "${header.type}" announces ${dataLength} bytes of data, over the limit of ${MAX_DATA_BYTES}`);
    if (payloadLength > this.maxPayloadBytes) {
      throw framingError(
        `event "${header.type}" announces a ${payloadLength}-byte payload, over the limit of ${this.maxPayloadBytes} bytes`,
      );
    }
    const data = isPlainObject(header.data) ? { ...header.data } : {};
    return { type: header.type, data, dataLength, payloadLength };
  }

  private finish(pending: PendingEvent, dataBytes: Buffer, payload: Buffer): WyomingEvent {
    let data = pending.data;
    if (dataBytes.length > 0) {
      let extra: unknown;
      try {
        extra = JSON.parse(dataBytes.toString('utf8'));
      } catch {
        throw framingError(`malformed data block of "${pending.type}": not JSON`);
      }
      if (!isPlainObject(extra)) throw framingError(`malformed data block of "${pending.type}": not a JSON object`);
      data = { ...data, ...extra };
    }
    // Copy: the slice would otherwise keep the whole receive buffer alive.
    return payload.length > 0 ? { type: pending.type, data, payload: Buffer.from(payload) } : { type: pending.type, data };
  }
}
