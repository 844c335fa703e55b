/**
 * WebSocket frames built by hand (RFC 6455), so storm tests can send what no well-behaved library
 * would: unmasked client frames, masked server frames, reserved bits and opcodes, a length field
 * that announces more than will ever come, half frames. Written independently of `ws`, whose
 * parser is what the daemon runs.
 */
import { createHash } from 'node:crypto';

export interface FrameOptions {
  fin?: boolean;
  /** Clients must mask, servers must not; default: masked. */
  mask?: boolean;
  /** RSV1-3 as a 3-bit number. */
  rsv?: number;
  /** The length field, when it should lie about the payload. */
  length?: bigint;
}

export function wsFrame(opcode: number, payload: Buffer, options: FrameOptions = {}): Buffer {
  const fin = options.fin ?? true;
  const mask = options.mask ?? true;
  const length = options.length ?? BigInt(payload.length);
  const first = (fin ? 0x80 : 0) | ((options.rsv ?? 0) << 4) | opcode;
  let header: Buffer;
  if (length < 126n) header = Buffer.from([first, (mask ? 0x80 : 0) | Number(length)]);
  else if (length < 65536n) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = (mask ? 0x80 : 0) | 126;
    header.writeUInt16BE(Number(length), 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = (mask ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(length, 2);
  }
  if (!mask) return Buffer.concat([header, payload]);
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ (key[i % 4] as number)));
  return Buffer.concat([header, key, masked]);
}

/** The Sec-WebSocket-Accept a server answers to `key`. */
export function acceptKey(key: string): string {
  return createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
}
