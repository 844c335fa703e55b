/**
 * mqtt.js's outgoing store, on disk: the QoS 1/2 publishes (and QoS 2 PUBRELs) the broker has not
 * acknowledged yet. mqtt.js keeps them in memory by default, so a daemon restart lost every message
 * in flight and every QoS 1/2 message published while the broker was away (mqtt.js puts those into
 * this store too, see mqtt-connection.ts). With this store they are sent again after the next
 * connection, by this process or the next one on the same data directory.
 *
 * Layout: `<dir>/journal`, one JSON record per line, appended: `{"op":"put",...packet}` or
 * `{"op":"del","id":N}`. Loading replays it in order (a later put of an id replaces the earlier one,
 * as a PUBREL replaces its PUBLISH). Compaction rewrites only the live packets into `journal.tmp`,
 * fsyncs it and renames it over the journal; it runs at open and when dead records outnumber live
 * ones (and more than COMPACT_MIN_DEAD of them exist), so the file stays near the size of what is
 * pending.
 *
 * Durability (fsync policy):
 * - every put/del is written to the file (the kernel's page cache) before mqtt.js is told it is
 *   stored, so a crash, kill -9 or daemon restart loses nothing;
 * - the file is fdatasync'ed at most FSYNC_INTERVAL_MS after a change, and at close and
 *   compaction, so a power cut may lose what was stored in the last second or so: a lost put is a
 *   lost message, a lost del a message sent twice (QoS 1 allows it). Syncing every message would
 *   cost an SD card write per publish.
 * - a torn or garbled line (power cut mid-write) is skipped and counted at load.
 * - a write that fails (disk full) keeps the packet in memory, so it is still delivered while the
 *   process lives; `problem` says so (health), and the next sync tick tries a full rewrite.
 *
 * Bound: at most `maxMessages()` PUBLISH packets; storing one more drops the oldest, which is
 * counted and handed to `onDrop` (the connection tells mqtt.js to forget it).
 */
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { IPublishPacket, IStore, Packet } from 'mqtt';
import type { OutboxStats } from '../../src/sdk/api.js';
import type { Logger } from '../../src/sdk/index.js';

export type { OutboxStats };

export const OUTBOX_JOURNAL = 'journal';
const JOURNAL_TMP = 'journal.tmp';
/** How long a change may stay in the page cache before it is forced to the disk. */
export const FSYNC_INTERVAL_MS = 1000;
/** Dead records below this never trigger a compaction (rewriting a tiny file often is worse than a little garbage). */
export const COMPACT_MIN_DEAD = 1000;
const NEWLINE = 0x0a;

type Callback = (error?: Error, packet?: Packet) => void;
type PacketStream = ReturnType<IStore['createStream']>;

export interface OutboxStoreOptions {
  /** The directory of the journal (created when missing), e.g. `<plugin data>/outbox`. */
  dir: string;
  /** The most PUBLISH packets kept; read at every put so a changed setting applies at once. */
  maxMessages: () => number;
  log: Logger;
  /** The oldest publish was dropped to respect maxMessages (already counted in `dropped`). */
  onDrop?: (packet: Packet) => void;
  fsyncIntervalMs?: number;
}

export class OutboxStore implements IStore {
  readonly #options: OutboxStoreOptions;
  readonly #packets = new Map<number, Packet>();
  #publishes = 0;
  /** Lines in the journal file, live or dead. */
  #records = 0;
  #fd: number | undefined;
  #dirty = false;
  #syncTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #problem: string | undefined;
  #loaded = 0;
  #skipped = 0;
  #dropped = 0;

  constructor(options: OutboxStoreOptions) {
    this.#options = options;
  }

  /**
   * Reads the journal (if any), applies the bound, rewrites it compactly and opens it for
   * appending. Synchronous by design: nothing may be stored before. A directory that cannot be
   * read or written does not throw: the store then works in memory and `stats().problem` says so.
   */
  open(): this {
    const dir = this.#options.dir;
    let journal: Buffer = Buffer.alloc(0);
    try {
      mkdirSync(dir, { recursive: true });
      journal = readJournal(join(dir, OUTBOX_JOURNAL));
    } catch (error) {
      // Messages can still be delivered while this process lives; health says they are not durable.
      // Nothing is written either: a rewrite would replace a journal that could not be read.
      this.#fail('read', error);
      return this;
    }
    // Line by line from the bytes: a large outbox would not fit in one JavaScript string.
    for (let start = 0; start < journal.length; ) {
      let end = journal.indexOf(NEWLINE, start);
      if (end < 0) end = journal.length;
      const line = journal.toString('utf8', start, end);
      start = end + 1;
      if (line === '') continue;
      const record = decodeRecord(line);
      if (record === undefined) {
        this.#skipped++;
        continue;
      }
      if (record.op === 'del') this.#forget(record.id);
      else this.#remember(record.packet);
    }
    this.#loaded = this.#packets.size;
    if (this.#skipped > 0) {
      this.#options.log.warn(
        { skipped: this.#skipped, dir },
        `MQTT outbox: ${this.#skipped} unreadable journal line(s) skipped (a write torn by a power cut?)`,
      );
    }
    this.#enforceBound();
    this.#compact();
    this.#syncTimer = setInterval(() => this.#tick(), this.#options.fsyncIntervalMs ?? FSYNC_INTERVAL_MS);
    this.#syncTimer.unref();
    return this;
  }

  // ---- IStore (the contract of mqtt.js's in-memory Store: callbacks may run synchronously) ----

  put(packet: Packet, cb: (error?: Error) => void): this {
    if (this.#closed) {
      cb(new Error('the MQTT outbox is closed'));
      return this;
    }
    const id = packet.messageId;
    if (id === undefined) {
      cb(new Error('a packet without a message id cannot be stored'));
      return this;
    }
    this.#remember(packet);
    this.#append(encodeRecord({ op: 'put', packet }));
    this.#enforceBound();
    cb();
    return this;
  }

  get(packet: Pick<Packet, 'messageId'>, cb: Callback): this {
    const stored = packet.messageId === undefined ? undefined : this.#packets.get(packet.messageId);
    if (stored === undefined) cb(new Error('missing packet'));
    else cb(undefined, stored);
    return this;
  }

  del(packet: Pick<Packet, 'messageId'>, cb: Callback): this {
    const id = packet.messageId;
    const stored = id === undefined ? undefined : this.#packets.get(id);
    if (id === undefined || stored === undefined) {
      cb(new Error('missing packet'));
      return this;
    }
    this.#forget(id);
    if (!this.#closed) {
      this.#append(encodeRecord({ op: 'del', id }));
      this.#compactWhenWasteful();
    }
    cb(undefined, stored);
    return this;
  }

  /** The packets kept now, oldest first; later changes do not affect a stream already made. */
  createStream(): PacketStream {
    const snapshot = [...this.#packets.values()];
    let next = 0;
    const stream = new Readable({
      objectMode: true,
      read() {
        this.push(next < snapshot.length ? snapshot[next++] : null);
      },
    });
    // mqtt.js types it as readable-stream's Readable, which node's Readable implements (read, destroy, events).
    return stream as unknown as PacketStream;
  }

  /** Forces what was written to the disk and closes the file. mqtt.js calls it when its client ends; idempotent. */
  close(cb?: (error?: Error) => void): void {
    if (!this.#closed) {
      this.#closed = true;
      clearInterval(this.#syncTimer);
      this.#syncTimer = undefined;
      this.#sync();
      if (this.#fd !== undefined) {
        try {
          closeSync(this.#fd);
        } catch {
          // Nothing to save any more; the data was synced (or the problem already reported).
        }
        this.#fd = undefined;
      }
    }
    cb?.();
  }

  // ---- for the connection ----

  /** True when a packet with this message id is kept (mqtt.js must not reuse the id for a new message). */
  has(messageId: number): boolean {
    return this.#packets.has(messageId);
  }

  get size(): number {
    return this.#packets.size;
  }

  stats(): OutboxStats {
    return {
      messages: this.#packets.size,
      loaded: this.#loaded,
      skipped_lines: this.#skipped,
      dropped: this.#dropped,
      problem: this.#problem ?? null,
    };
  }

  // ---- internals ----

  #remember(packet: Packet): void {
    const id = packet.messageId;
    if (id === undefined) return;
    const previous = this.#packets.get(id);
    if (previous?.cmd === 'publish') this.#publishes--;
    if (packet.cmd === 'publish') this.#publishes++;
    this.#packets.set(id, packet);
  }

  #forget(id: number): void {
    const previous = this.#packets.get(id);
    if (previous === undefined) return;
    if (previous.cmd === 'publish') this.#publishes--;
    this.#packets.delete(id);
  }

  /** Drops the oldest publishes beyond the bound (PUBRELs stay: their message already reached the broker). */
  #enforceBound(): void {
    const max = Math.max(1, this.#options.maxMessages());
    if (this.#publishes <= max) return;
    for (const [id, packet] of this.#packets) {
      if (this.#publishes <= max) break;
      if (packet.cmd !== 'publish') continue;
      this.#forget(id);
      this.#dropped++;
      if (this.#fd !== undefined) this.#append(encodeRecord({ op: 'del', id }));
      this.#options.onDrop?.(packet);
    }
  }

  #append(line: string): void {
    if (this.#fd === undefined) return;
    this.#records++;
    try {
      writeAll(this.#fd, Buffer.from(line));
      this.#dirty = true;
    } catch (error) {
      this.#fail('write', error);
    }
  }

  #compactWhenWasteful(): void {
    const dead = this.#records - this.#packets.size;
    if (dead > COMPACT_MIN_DEAD && dead > this.#packets.size) this.#compact();
  }

  /** Writes the live packets to a new file, syncs it and puts it in place of the journal. */
  #compact(): void {
    const dir = this.#options.dir;
    const journal = join(dir, OUTBOX_JOURNAL);
    const tmp = join(dir, JOURNAL_TMP);
    try {
      const fd = openSync(tmp, 'w');
      try {
        for (const packet of this.#packets.values()) writeAll(fd, Buffer.from(encodeRecord({ op: 'put', packet })));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, journal);
      syncDirectory(dir);
      if (this.#fd !== undefined) closeSync(this.#fd);
      this.#fd = openSync(journal, 'a');
      this.#records = this.#packets.size;
      this.#dirty = false;
      if (this.#problem !== undefined) this.#options.log.info('MQTT outbox: writing to the disk works again');
      this.#problem = undefined;
    } catch (error) {
      this.#fail('compact', error);
    }
  }

  #tick(): void {
    if (this.#problem !== undefined) this.#compact();
    else this.#sync();
  }

  #sync(): void {
    if (!this.#dirty || this.#fd === undefined) return;
    try {
      fdatasyncSync(this.#fd);
      this.#dirty = false;
    } catch (error) {
      this.#fail('sync', error);
    }
  }

  #fail(what: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    const problem = `the MQTT outbox cannot ${what} ${join(this.#options.dir, OUTBOX_JOURNAL)} (${message}): pending messages are kept in memory only`;
    if (this.#problem !== problem) this.#options.log.error({ err: error }, problem);
    this.#problem = problem;
  }
}

// ---- journal records ----

type JournalRecord = { op: 'put'; packet: Packet } | { op: 'del'; id: number };

/** One line. A publish's payload is base64 (HomeAgent speaks MQTT 3.1.1, so packets carry no properties). */
function encodeRecord(record: JournalRecord): string {
  if (record.op === 'del') return `{"op":"del","id":${record.id}}\n`;
  const packet = record.packet;
  if (packet.cmd === 'publish') {
    const p = packet as IPublishPacket;
    const payload = typeof p.payload === 'string' ? Buffer.from(p.payload) : p.payload;
    return `${JSON.stringify({
      op: 'put',
      cmd: 'publish',
      id: p.messageId,
      topic: p.topic,
      qos: p.qos,
      retain: p.retain === true,
      dup: p.dup === true,
      payload: Buffer.from(payload).toString('base64'),
    })}\n`;
  }
  return `${JSON.stringify({ op: 'put', cmd: packet.cmd, id: packet.messageId, qos: (packet as { qos?: number }).qos ?? 1 })}\n`;
}

function decodeRecord(line: string): JournalRecord | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const id = r.id;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > 65535) return undefined;
  if (r.op === 'del') return { op: 'del', id };
  if (r.op !== 'put') return undefined;
  if (r.cmd === 'publish') {
    if (typeof r.topic !== 'string' || typeof r.payload !== 'string' || (r.qos !== 1 && r.qos !== 2)) return undefined;
    const packet: IPublishPacket = {
      cmd: 'publish',
      messageId: id,
      topic: r.topic,
      qos: r.qos,
      retain: r.retain === true,
      dup: r.dup === true,
      payload: Buffer.from(r.payload, 'base64'),
    };
    return { op: 'put', packet };
  }
  if (r.cmd === 'pubrel') return { op: 'put', packet: { cmd: 'pubrel', messageId: id } };
  return undefined;
}

function readJournal(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw error;
  }
}

function writeAll(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
}

/** A rename is durable only once the directory entry is synced too. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename is then as durable as they allow.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
