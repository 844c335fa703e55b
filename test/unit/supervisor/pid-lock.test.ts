import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { PidLock, runningOwner } from '../../../src/supervisor/pid-lock.js';
import { expectError, type Teardown, tempDir } from '../fixtures/support.js';

/** Starts a long-running child; killed (by its pid) at teardown. */
async function child(t: Teardown, args: string[]): Promise<ChildProcess & { pid: number }> {
  const proc = spawn(process.execPath, args, { stdio: 'ignore' });
  t.teardown(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  // 'spawn' fires once exec has succeeded, so /proc/<pid>/cmdline is the child's own.
  await once(proc, 'spawn');
  if (proc.pid === undefined) throw new Error('no pid');
  return proc as ChildProcess & { pid: number };
}

t.test('acquire writes our pid; release removes the file', async (t) => {
  const dir = tempDir(t);
  const lock = new PidLock(join(dir, 'homeagent.pid'));
  lock.acquire();
  t.equal(readFileSync(lock.file, 'utf8'), `${process.pid}\n`);
  lock.release();
  t.notOk(existsSync(lock.file));
  lock.release();
  t.pass('release twice is safe');
  lock.acquire();
  t.ok(existsSync(lock.file), 'can be taken again');
  lock.release();
});

t.test('release leaves a file that another process has taken over', async (t) => {
  const dir = tempDir(t);
  const lock = new PidLock(join(dir, 'homeagent.pid'));
  lock.acquire();
  writeFileSync(lock.file, '12345\n');
  lock.release();
  t.equal(readFileSync(lock.file, 'utf8'), '12345\n');
});

t.test('a stale pid file is taken over', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'homeagent.pid');
  for (const content of ['2147483646\n', 'garbage\n', '', '-5\n']) {
    writeFileSync(file, content);
    t.equal(runningOwner(file), undefined, `${JSON.stringify(content)} is stale`);
    const lock = new PidLock(file);
    lock.acquire();
    t.equal(readFileSync(file, 'utf8'), `${process.pid}\n`, `taken over from ${JSON.stringify(content)}`);
    lock.release();
  }
});

t.test('a live process that is not HomeAgent does not hold the lock', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'homeagent.pid');
  const other = await child(t, ['-e', 'setTimeout(() => {}, 60000)', 'unrelated']);
  writeFileSync(file, `${other.pid}\n`);
  t.equal(runningOwner(file), undefined);
  const lock = new PidLock(file);
  lock.acquire();
  t.equal(readFileSync(file, 'utf8'), `${process.pid}\n`);
  lock.release();
});

t.test('a live HomeAgent owner is refused', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'homeagent.pid');
  const owner = await child(t, ['-e', 'setTimeout(() => {}, 60000)', 'homeagent']);
  writeFileSync(file, `${owner.pid}\n`);
  t.equal(runningOwner(file), owner.pid);
  const lock = new PidLock(file);
  const error = expectError(t, () => lock.acquire(), 'HA_ERR_DAEMON_ALREADY_RUNNING');
  t.match(error.message, `pid ${owner.pid}`);
  t.match(error.message, file);
  t.equal(readFileSync(file, 'utf8'), `${owner.pid}\n`, 'the owner keeps its file');
  lock.release();
  t.ok(existsSync(file), 'release without holding the lock removes nothing');

  owner.kill('SIGKILL');
  await once(owner, 'exit');
  // The pid may linger as a zombie only until the exit event has been delivered; now it is gone.
  lock.acquire();
  t.equal(readFileSync(file, 'utf8'), `${process.pid}\n`, 'taken over once the owner is gone');
  lock.release();
});

t.test('a second lock of this process on the same file is refused (two in-process daemons)', async (t) => {
  const dir = tempDir(t);
  const first = new PidLock(join(dir, 'homeagent.pid'));
  first.acquire();
  // Same file by another spelling: the set of held files compares resolved paths.
  const second = new PidLock(join(dir, '.', 'homeagent.pid'));
  const error = expectError(t, () => second.acquire(), 'HA_ERR_DAEMON_ALREADY_RUNNING');
  t.match(error.message, 'of this process');
  second.release();
  t.ok(existsSync(first.file), "the refused lock's release leaves the holder's file");
  first.release();
  second.acquire();
  t.pass('taken once the first daemon let go');
  second.release();
});
