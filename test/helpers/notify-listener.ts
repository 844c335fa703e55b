/**
 * A systemd notification socket for tests: `notify_listener.py` (python3, because Node cannot bind
 * AF_UNIX datagram sockets) binds the socket and reports each datagram as a JSON line; this side
 * parses them into key/value maps ("READY=1\nSTATUS=Running\n" → {READY: '1', STATUS: 'Running'}).
 *
 * Tests that use it call `requireTool(t, 'python3')` first.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'notify_listener.py');

export interface NotifyMessage {
  /** Monotonic milliseconds when the listener received it (only differences are meaningful). */
  t: number;
  /** The datagram as sent. */
  msg: string;
  /** KEY=VALUE lines of the datagram. */
  fields: Record<string, string>;
}

export type NotifyPredicate = (message: NotifyMessage, index: number, all: readonly NotifyMessage[]) => boolean;

export interface NotifyListener {
  /** The socket path, for NOTIFY_SOCKET (always well under the 108-byte limit). */
  readonly path: string;
  /** Every datagram received so far, in order. */
  readonly messages: NotifyMessage[];
  /**
   * The first message (already received or still to come) for which `predicate` holds. Rejects
   * after `timeoutMs`, or when the listener stops, listing what was received.
   */
  waitFor(predicate: NotifyPredicate, timeoutMs: number): Promise<NotifyMessage>;
  /** Stops the listener and removes its directory. Safe to call more than once. */
  close(): Promise<void>;
}

/** `READY=1\nSTATUS=a=b\n` → {READY: '1', STATUS: 'a=b'}. */
export function parseNotifyMessage(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const eq = line.indexOf('=');
    if (eq <= 0) fields[line] = '';
    else fields[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return fields;
}

/** Messages that carry `key` (optionally with exactly `value`). */
export function withField(key: string, value?: string): NotifyPredicate {
  return (m) => key in m.fields && (value === undefined || m.fields[key] === value);
}

/**
 * Starts a listener on a fresh socket in its own temporary directory. Pass `t` to have it closed
 * when the test ends.
 */
export async function start(options: { t?: { teardown(fn: () => unknown): void }; startTimeoutMs?: number } = {}): Promise<NotifyListener> {
  const dir = mkdtempSync(join(tmpdir(), 'ha-notify-'));
  const path = join(dir, 'notify.sock');
  const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn('python3', ['-u', SCRIPT, path], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: NotifyMessage[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let exited = false;
  let spawnError: Error | undefined;
  let closed: Promise<void> | undefined;

  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      wake();
      resolve();
    });
    child.once('error', (error) => {
      spawnError = error;
      exited = true;
      wake();
      resolve();
    });
  });
  // The listener may be gone before close() ends its stdin.
  child.stdin.on('error', () => {});
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderr += text;
  });

  let bound = false;
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    let record: { t?: unknown; msg?: unknown; bound?: unknown };
    try {
      record = JSON.parse(line);
    } catch {
      stderr += `unparsable listener line: ${line}\n`;
      return;
    }
    if (typeof record.bound === 'string') bound = true;
    else if (typeof record.msg === 'string' && typeof record.t === 'number') {
      messages.push({ t: record.t, msg: record.msg, fields: parseNotifyMessage(record.msg) });
    }
    wake();
  });

  const summary = () =>
    `${messages.length} message(s) received: ${JSON.stringify(messages.map((m) => m.msg))}${stderr ? `; listener stderr: ${stderr}` : ''}`;

  const until = (ready: () => boolean, timeoutMs: number, what: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (ready()) {
          finish();
          resolve();
        } else if (exited) {
          finish();
          reject(new Error(`notify listener stopped while waiting for ${what} (${spawnError?.message ?? 'exited'}); ${summary()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${summary()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const listener: NotifyListener = {
    path,
    messages,
    async waitFor(predicate, timeoutMs) {
      let found: NotifyMessage | undefined;
      await until(
        () => {
          found = messages.find((m, i, all) => predicate(m, i, all));
          return found !== undefined;
        },
        timeoutMs,
        'a matching notification',
      );
      return found as NotifyMessage;
    },
    close() {
      closed ??= (async () => {
        if (!exited) {
          child.stdin.end();
          const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
          await exitPromise;
          clearTimeout(timer);
        }
        lines.close();
        rmSync(dir, { recursive: true, force: true });
      })();
      return closed;
    },
  };
  options.t?.teardown(() => listener.close());

  try {
    await until(() => bound, options.startTimeoutMs ?? 10_000, 'the listener to bind its socket');
  } catch (error) {
    await listener.close();
    throw error;
  }
  return listener;
}

export { start as startNotifyListener };
