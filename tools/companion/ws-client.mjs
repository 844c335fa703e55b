/**
 * A minimal WebSocket client (RFC 6455) on node:http's upgrade, so the companion runs on a bare
 * Node 20 without packages: Node 20's WebSocket global needs --experimental-websocket and cannot
 * send headers. It speaks what the companion needs: text and binary messages (fragmented ones
 * reassembled), ping/pong, the closing handshake, masking of every client frame, and a size limit
 * on what it accepts. A frame that breaks the protocol ends the connection with 1002, a message
 * over the limit with 1009. `sendRaw` writes bytes as they are, for tests that must send garbage.
 */
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OP = { CONTINUATION: 0, TEXT: 1, BINARY: 2, CLOSE: 8, PING: 9, PONG: 10 };

/** Connects to `url` (ws:// or wss://); resolves with the open connection, rejects with the HTTP status or network error. */
export function connectWebSocket(url, options = {}) {
  const target = new URL(url);
  if (target.protocol !== 'ws:' && target.protocol !== 'wss:') return Promise.reject(new Error(`not a ws:// or wss:// address: ${url}`));
  const key = randomBytes(16).toString('base64');
  const request = (target.protocol === 'wss:' ? httpsRequest : httpRequest)({
    host: target.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: target.port || (target.protocol === 'wss:' ? 443 : 80),
    path: `${target.pathname}${target.search}`,
    headers: {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': key,
      ...options.headers,
    },
    timeout: options.timeoutMs ?? 10_000,
  });
  return new Promise((resolve, reject) => {
    request.on('timeout', () => request.destroy(new Error('the gateway did not answer the upgrade in time')));
    request.on('error', reject);
    request.on('response', (response) => {
      response.resume();
      reject(
        Object.assign(new Error(`the gateway answered HTTP ${response.statusCode} instead of upgrading`), { status: response.statusCode }),
      );
    });
    request.on('upgrade', (response, socket, head) => {
      const expected = createHash('sha1').update(`${key}${GUID}`).digest('base64');
      if (response.headers['sec-websocket-accept'] !== expected) {
        socket.destroy();
        reject(new Error('the gateway answered a wrong Sec-WebSocket-Accept'));
        return;
      }
      resolve(new WsConnection(socket, head, options.maxMessageBytes ?? 64 * 1024 * 1024));
    });
    request.end();
  });
}

export class WsConnection extends EventEmitter {
  #socket;
  #buffer = Buffer.alloc(0);
  #fragments = [];
  #fragmentBytes = 0;
  #fragmentOpcode = 0;
  #max;
  #closeSent = false;
  #closed = false;

  constructor(socket, head, maxMessageBytes) {
    super();
    this.#socket = socket;
    this.#max = maxMessageBytes;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.#data(chunk));
    socket.on('error', (error) => this.emit('error', error));
    socket.on('close', () => this.#ended(1006, ''));
    if (head?.length) this.#data(head);
  }

  get open() {
    return !this.#closed && !this.#closeSent;
  }

  sendText(text) {
    this.#write(OP.TEXT, Buffer.from(text, 'utf8'));
  }

  sendBinary(bytes) {
    this.#write(OP.BINARY, bytes);
  }

  /** Writes bytes unframed (tests: frames no well-behaved client sends). */
  sendRaw(bytes) {
    if (!this.#closed) this.#socket.write(bytes);
  }

  ping(payload = Buffer.alloc(0)) {
    this.#write(OP.PING, payload);
  }

  close(code = 1000, reason = '') {
    if (this.#closeSent || this.#closed) return;
    const body = Buffer.alloc(2 + Buffer.byteLength(reason));
    body.writeUInt16BE(code, 0);
    body.write(reason, 2);
    this.#write(OP.CLOSE, body);
    this.#closeSent = true;
    // A gateway that never answers the close must not keep the socket.
    setTimeout(() => this.#socket.destroy(), 2000).unref();
  }

  /** Ends the connection at once, without the closing handshake. */
  terminate() {
    this.#socket.destroy();
  }

  #write(opcode, payload) {
    if (this.#closed || this.#closeSent) return;
    this.#socket.write(encodeFrame(opcode, payload));
  }

  #fail(code, reason) {
    this.close(code, reason);
    this.#ended(code, reason);
  }

  #ended(code, reason) {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.destroy();
    this.emit('close', code, reason);
  }

  #data(chunk) {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (!this.#closed) {
      const frame = decodeFrame(this.#buffer, this.#max);
      if (frame === undefined) return;
      if (frame.error) return this.#fail(frame.error.code, frame.error.reason);
      this.#buffer = this.#buffer.subarray(frame.size);
      this.#frame(frame);
    }
  }

  #frame({ fin, opcode, payload }) {
    if (opcode >= 8) {
      if (!fin || payload.length > 125) return this.#fail(1002, 'bad control frame');
      if (opcode === OP.PING) return this.#write(OP.PONG, payload);
      if (opcode === OP.PONG) return;
      if (opcode === OP.CLOSE) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.subarray(2).toString('utf8');
        if (!this.#closeSent) {
          this.#write(OP.CLOSE, payload.subarray(0, 2));
          this.#closeSent = true;
        }
        return this.#ended(code, reason);
      }
      return this.#fail(1002, `unknown opcode ${opcode}`);
    }
    if (opcode === OP.CONTINUATION) {
      if (this.#fragmentOpcode === 0) return this.#fail(1002, 'continuation without a first frame');
    } else if (opcode === OP.TEXT || opcode === OP.BINARY) {
      if (this.#fragmentOpcode !== 0) return this.#fail(1002, 'a new message inside a fragmented one');
      this.#fragmentOpcode = opcode;
    } else return this.#fail(1002, `unknown opcode ${opcode}`);
    this.#fragmentBytes += payload.length;
    if (this.#fragmentBytes > this.#max) return this.#fail(1009, 'message too big');
    this.#fragments.push(payload);
    if (!fin) return;
    const message = Buffer.concat(this.#fragments);
    const binary = this.#fragmentOpcode === OP.BINARY;
    this.#fragments = [];
    this.#fragmentBytes = 0;
    this.#fragmentOpcode = 0;
    this.emit('message', binary ? message : message.toString('utf8'), binary);
  }
}

/** One client frame: FIN set, masked with a fresh key. */
export function encodeFrame(opcode, payload, { fin = true, mask = true } = {}) {
  const length = payload.length;
  let header;
  if (length < 126) header = Buffer.from([(fin ? 0x80 : 0) | opcode, (mask ? 0x80 : 0) | length]);
  else if (length < 65536) {
    header = Buffer.alloc(4);
    header[0] = (fin ? 0x80 : 0) | opcode;
    header[1] = (mask ? 0x80 : 0) | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = (fin ? 0x80 : 0) | opcode;
    header[1] = (mask ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!mask) return Buffer.concat([header, payload]);
  const key = randomBytes(4);
  const masked = Buffer.alloc(length);
  for (let i = 0; i < length; i++) masked[i] = payload[i] ^ key[i & 3];
  return Buffer.concat([header, key, masked]);
}

/** The first frame in `buffer` from a server: undefined while incomplete, `{error}` when it breaks the protocol. */
function decodeFrame(buffer, max) {
  if (buffer.length < 2) return undefined;
  const fin = (buffer[0] & 0x80) !== 0;
  if ((buffer[0] & 0x70) !== 0) return { error: { code: 1002, reason: 'reserved bits set' } };
  const opcode = buffer[0] & 0x0f;
  if ((buffer[1] & 0x80) !== 0) return { error: { code: 1002, reason: 'a server frame must not be masked' } };
  let length = buffer[1] & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return undefined;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return undefined;
    const long = buffer.readBigUInt64BE(2);
    if (long > BigInt(max)) return { error: { code: 1009, reason: 'message too big' } };
    length = Number(long);
    offset = 10;
  }
  if (length > max) return { error: { code: 1009, reason: 'message too big' } };
  if (buffer.length < offset + length) return undefined;
  return { fin, opcode, payload: buffer.subarray(offset, offset + length), size: offset + length };
}
