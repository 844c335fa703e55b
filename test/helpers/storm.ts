/**
 * Connection storms for listener tests: what a hostile or broken client does to a socket server,
 * in the shapes every listener's test runs against the real listener.
 *
 * - connectCloseStorm: hundreds of connections opened and closed at once, many at a time, ended
 *   every way a client can (destroyed while connecting, reset before the first byte, closed, half
 *   closed).
 * - holdConnections + overLimitStorm: more concurrent connections than the listener allows, never
 *   read and then reset.
 * - fuzzStorm: sessions sending random frames (the listener's own generator: garbage, huge lines,
 *   half frames, valid requests interleaved) and ending at every point: before the first byte,
 *   mid-frame, after a request and before its answer, after the answer, with a half close.
 *
 * Everything random comes from one seeded generator: the seed is printed as a test comment and
 * STORM_SEED=<seed> replays the same storm. Nothing here sleeps: every step waits for a socket
 * event, and the only timer is a deadline on waits for a listener that never answers.
 *
 * For clients, startHostileServer is the other side: a TCP server that does to each connection
 * whatever the test's behaviour says (reset at accept, garbage, half frames, a close mid-message).
 *
 * A reset is a TCP RST (resetAndDestroy) on TCP; a Unix socket has none, so there it is a close
 * with the listener's bytes still unread in our receive queue, which the kernel reports to the
 * listener as ECONNRESET (its write after that as EPIPE): the socket is paused from creation so
 * that Node never reads them.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Where the listener is: a Unix socket path, or host and port. */
export type StormTarget = { path: string } | { host: string; port: number };

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let x = this.#state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, max). */
  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

/** The storm's seed: STORM_SEED when set (to replay a failure), else a fresh one; printed either way. */
export function stormSeed(t: { comment(...args: unknown[]): void }): number {
  const given = process.env.STORM_SEED;
  const seed = given !== undefined && given !== '' ? Number(given) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  t.comment(`storm seed ${seed} (replay with STORM_SEED=${seed})`);
  return seed;
}

/** A socket to the target, paused (so that a close leaves the listener's bytes unread), errors swallowed: the storm expects them. */
export function dial(target: StormTarget): Socket {
  const socket = 'path' in target ? createConnection(target.path) : createConnection({ host: target.host, port: target.port });
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

/** Ends the connection abruptly (see the header for what that is on a Unix socket). */
export function reset(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    // ERR_INVALID_HANDLE_TYPE: not TCP.
    socket.destroy();
  }
}

function closed(socket: Socket): Promise<void> {
  return socket.closed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Resolves true once connected, false when the socket closed first (a listener may refuse). */
function connected(socket: Socket): Promise<boolean> {
  if (!socket.connecting) return Promise.resolve(!socket.destroyed);
  return new Promise((resolve) => {
    socket.once('connect', () => resolve(true));
    socket.once('close', () => resolve(false));
  });
}

function written(socket: Socket, data: Buffer): Promise<void> {
  if (socket.destroyed || data.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    socket.write(data, () => resolve());
  });
}

/**
 * Waits for the listener's first bytes or its close, whichever comes first, at most `deadlineMs`
 * (a listener that never answers must not hang the storm; reaching the deadline is no failure).
 */
function answerOrClose(socket: Socket, deadlineMs: number): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      socket.off('data', done);
      socket.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, deadlineMs);
    socket.on('data', done);
    socket.once('close', done);
    socket.resume();
  });
}

/** Runs `count` tasks, at most `concurrency` at once. */
export async function pool(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** What a storm did, for the test's comments. */
export interface StormTally {
  sessions: number;
  /** Sessions the listener closed or refused before they were connected. */
  refused: number;
  byEnding: Record<string, number>;
}

function tally(): StormTally {
  return { sessions: 0, refused: 0, byEnding: {} };
}

function count(t: StormTally, ending: string): void {
  t.sessions++;
  t.byEnding[ending] = (t.byEnding[ending] ?? 0) + 1;
}

const QUICK_ENDINGS = ['destroy-while-connecting', 'reset-on-connect', 'destroy-on-connect', 'end-on-connect'] as const;

/** `count` connections opened and closed at once, `concurrency` at a time, each ended in one of the quick ways. */
export async function connectCloseStorm(
  target: StormTarget,
  rng: Rng,
  options: { count?: number; concurrency?: number; deadlineMs?: number } = {},
): Promise<StormTally> {
  const deadlineMs = options.deadlineMs ?? 2000;
  const result = tally();
  await pool(options.count ?? 500, options.concurrency ?? 32, async (i) => {
    // Round-robin, so every ending is covered whatever the seed.
    const ending = QUICK_ENDINGS[i % QUICK_ENDINGS.length] as (typeof QUICK_ENDINGS)[number];
    const socket = dial(target);
    count(result, ending);
    if (ending === 'destroy-while-connecting') socket.destroy();
    else if (!(await connected(socket))) result.refused++;
    else if (ending === 'reset-on-connect') reset(socket);
    else if (ending === 'destroy-on-connect') socket.destroy();
    else {
      // A clean close: FIN, then read until the listener's FIN (or what it says first).
      if (rng.chance(0.5)) socket.end(garbage(rng, 16));
      else socket.end();
      await answerOrClose(socket, deadlineMs);
      socket.destroy();
    }
    await closed(socket);
  });
  return result;
}

/** `n` connections opened together and kept (reading, so they are healthy clients); `release` closes them. */
export async function holdConnections(target: StormTarget, n: number): Promise<{ sockets: Socket[]; release(): Promise<void> }> {
  const sockets = Array.from({ length: n }, () => dial(target));
  for (const socket of sockets) socket.resume();
  await Promise.all(sockets.map((socket) => connected(socket)));
  return {
    sockets,
    release: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(sockets.map(closed));
    },
  };
}

/**
 * `n` connections opened together and never read; once all are connected (or refused) and
 * `accepted()` says the listener has seen them, every one is reset.
 */
export async function overLimitStorm(
  target: StormTarget,
  n: number,
  accepted: () => Promise<unknown> = async () => {},
): Promise<StormTally> {
  const result = tally();
  const sockets = Array.from({ length: n }, () => dial(target));
  const outcomes = await Promise.all(sockets.map(connected));
  result.refused = outcomes.filter((ok) => !ok).length;
  await accepted();
  for (const socket of sockets) {
    count(result, 'reset-unread');
    reset(socket);
  }
  await Promise.all(sockets.map(closed));
  return result;
}

/** One fuzz case from a listener's generator: the frames to send, and whether the listener answers once all are sent. */
export interface FuzzCase {
  frames: Buffer[];
  answers: boolean;
}

export const FUZZ_ENDINGS = [
  'reset-before-first-byte',
  'reset-mid-frame',
  'reset-after-request',
  'close-after-answer',
  'half-close',
  'destroy-after-request',
] as const;
export type FuzzEnding = (typeof FUZZ_ENDINGS)[number];

export interface FuzzOptions {
  sessions: number;
  concurrency?: number;
  /** How long a session waits for an answer or a close before it gives up on the listener (no failure). */
  deadlineMs?: number;
}

/** Sessions with random frames, ending in every way in turn (round-robin, so each ending is covered whatever the seed). */
export async function fuzzStorm(
  target: StormTarget,
  rng: Rng,
  generate: (rng: Rng) => FuzzCase,
  options: FuzzOptions,
): Promise<StormTally> {
  const result = tally();
  const deadlineMs = options.deadlineMs ?? 2000;
  await pool(options.sessions, options.concurrency ?? 16, async (i) => {
    const ending = FUZZ_ENDINGS[i % FUZZ_ENDINGS.length] as FuzzEnding;
    const fuzz = generate(rng);
    const socket = dial(target);
    count(result, ending);
    if (!(await connected(socket))) {
      result.refused++;
      return;
    }
    switch (ending) {
      case 'reset-before-first-byte':
        reset(socket);
        break;
      case 'reset-mid-frame': {
        const at = rng.int(fuzz.frames.length);
        for (const frame of fuzz.frames.slice(0, at)) await written(socket, frame);
        const frame = fuzz.frames[at] ?? Buffer.alloc(0);
        await written(socket, frame.subarray(0, frame.length > 1 ? rng.between(1, frame.length - 1) : frame.length));
        reset(socket);
        break;
      }
      case 'reset-after-request':
      case 'destroy-after-request':
        for (const frame of fuzz.frames) await written(socket, frame);
        if (ending === 'reset-after-request') reset(socket);
        else socket.destroy();
        break;
      case 'close-after-answer':
        for (const frame of fuzz.frames) await written(socket, frame);
        if (fuzz.answers) await answerOrClose(socket, deadlineMs);
        socket.destroy();
        break;
      case 'half-close':
        for (const frame of fuzz.frames) await written(socket, frame);
        socket.end();
        await answerOrClose(socket, deadlineMs);
        socket.destroy();
        break;
    }
    await closed(socket);
  });
  return result;
}

/** Garbage that is no protocol at all: random bytes, NULs, lone CRs, invalid UTF-8. */
export function garbage(rng: Rng, max = 512): Buffer {
  switch (rng.int(4)) {
    case 0:
      return rng.bytes(rng.between(1, max));
    case 1:
      return Buffer.alloc(rng.between(1, max), 0);
    case 2:
      return Buffer.from('\r'.repeat(rng.between(1, 64)));
    default:
      return Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc]);
  }
}

/** A TCP server on loopback that treats each connection as the test says, for client storms. */
export interface HostileServer {
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Resolves once `n` connections have been accepted and closed again. */
  closedConnections(n: number): Promise<void>;
  close(): Promise<void>;
}

/** `behave` gets each accepted socket (errors already swallowed) and its index, counting from 0. */
export async function startHostileServer(behave: (socket: Socket, index: number) => void): Promise<HostileServer> {
  const open = new Set<Socket>();
  let accepted = 0;
  let closedCount = 0;
  const waiters = new Set<() => void>();
  const server: Server = createServer((socket) => {
    const index = accepted++;
    open.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      open.delete(socket);
      closedCount++;
      for (const wake of [...waiters]) wake();
    });
    behave(socket, index);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    get connections() {
      return accepted;
    },
    closedConnections: (n) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (closedCount < n) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Collects bytes until the HTTP request head is complete (CRLF CRLF); resolves with the head, or undefined if the socket closed first. */
export function readRequestHead(socket: Socket, maxBytes = 64 * 1024): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1 && text.length < maxBytes) return;
      socket.off('data', onData);
      socket.pause();
      resolve(text.slice(0, end === -1 ? text.length : end + 4));
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(undefined));
  });
}
