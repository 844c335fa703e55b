/**
 * The in-process path guard against a real /proc and real folders: every spelling of a path into
 * a protected tree resolves to it (symlinks, `..` after a symlink, `//`, `./`, /proc/self, option
 * values, files listing files), recursive readers are refused folders that contain one, and
 * ordinary reads still pass. The plugin-level tests (cmd-isolation.test.ts) run the real commands.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { canonicalPath, guardPaths, MAX_SCAN_ENTRIES, type ProtectedTrees, pathCandidates } from '../../../../plugins/cmd/path-guard.js';
import { programReach } from '../../../../plugins/cmd/program-reach.js';
import { tempDir } from '../../fixtures/support.js';

interface Layout {
  trees: ProtectedTrees;
  data: string;
  cwd: string;
  etc: string;
  outside: string;
}

function layout(t: Test, overrides: Partial<ProtectedTrees> = {}): Layout {
  const data = realpathSync(tempDir(t, 'ha-guard-data-'));
  const etc = realpathSync(tempDir(t, 'ha-guard-etc-'));
  const outside = realpathSync(tempDir(t, 'ha-guard-out-'));
  const cwd = join(data, 'plugin-data', 'cmd');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(join(data, 'backups'));
  writeFileSync(join(data, 'state.db'), 'SQLite format 3\0');
  writeFileSync(join(etc, 'config.yaml'), 'core: {}\n');
  writeFileSync(join(outside, 'notes.txt'), 'hello\n');
  const trees: ProtectedTrees = {
    roots: [
      { path: data, what: "the daemon's data folder" },
      { path: join(etc, 'config.yaml'), what: 'the configuration file' },
    ],
    exempt: cwd,
    pid: process.pid,
    uid: process.getuid?.() ?? 0,
    ...overrides,
  };
  return { trees, data, cwd, etc, outside };
}

function refused(t: Test, l: Layout, argv: string[], why: RegExp, cwd = l.cwd): void {
  const [program, ...args] = argv as [string, ...string[]];
  t.match(guardPaths([program], args, cwd, l.trees) ?? 'allowed', why, `refused: ${JSON.stringify(argv)}`);
}

function allowed(t: Test, l: Layout, argv: string[], cwd = l.cwd): void {
  const [program, ...args] = argv as [string, ...string[]];
  t.equal(guardPaths([program], args, cwd, l.trees), undefined, `allowed: ${JSON.stringify(argv)}`);
}

function sleeper(t: Test, options: { uid?: number; gid?: number } = {}): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore', ...options });
  t.teardown(() => void child.kill('SIGKILL'));
  if (child.pid === undefined) throw new Error('sleep did not start');
  return child as ChildProcess & { pid: number };
}

t.test('canonical paths resolve like the kernel', async (t) => {
  const l = layout(t);
  symlinkSync(join(l.data, 'backups'), join(l.outside, 'to-backups'));
  t.equal(canonicalPath(`/proc/${process.pid}/./environ`, '/'), `/proc/${process.pid}/environ`);
  t.equal(canonicalPath(`/proc//${process.pid}/environ`, '/'), `/proc/${process.pid}/environ`);
  t.equal(canonicalPath(`/proc/self/../${process.pid}/environ`, '/'), `/proc/${process.pid}/environ`);
  t.equal(canonicalPath('/proc/self', '/'), `/proc/${process.pid}`, "/proc/self is the daemon's own");
  t.match(canonicalPath('/proc/thread-self/environ', '/'), new RegExp(`^/proc/${process.pid}/task/\\d+/environ$`));
  t.equal(canonicalPath('../../state.db', l.cwd), join(l.data, 'state.db'), 'relative to the working directory');
  t.equal(
    canonicalPath(`${l.outside}/to-backups/../state.db`, '/'),
    join(l.data, 'state.db'),
    '.. applies after the symlink, as in the kernel',
  );
  t.equal(canonicalPath(`${l.outside}/missing/../../x`, '/'), join(dirname(l.outside), 'x'), 'lexical from the first missing component');
});

t.test('path candidates: option values, attached values, response files', async (t) => {
  t.same(pathCandidates('--files0-from=/x'), ['--files0-from=/x', '/x']);
  t.same(pathCandidates('if=/dev/sda'), ['if=/dev/sda', '/dev/sda']);
  t.same(pathCandidates('-f/x'), ['-f/x', '/x']);
  t.same(pathCandidates('-af/x'), ['-af/x', 'f/x', '/x']);
  t.same(pathCandidates('@list'), ['@list', 'list']);
  t.same(pathCandidates('-h'), ['-h']);
  t.equal(pathCandidates(`-${'a'.repeat(80)}`), undefined, 'a cluster too long to check');
});

t.test("every spelling of the daemon's /proc entries is refused", async (t) => {
  const l = layout(t);
  const pid = process.pid;
  const tid = pid;
  for (const path of [
    `/proc/${pid}/./environ`,
    `/proc//${pid}/environ`,
    `/proc/self/../${pid}/environ`,
    `/proc/${pid}/environ`,
    '/proc/self/environ',
    '/proc/thread-self/environ',
    `/proc/${pid}/task/${tid}/environ`,
    `/proc/${pid}/mem`,
    `/proc/${pid}/fd/0`,
    `/proc/${pid}/cwd`,
    `/proc/${pid}/root/etc/hostname`,
    '/dev/fd/1',
    '/dev/stdin',
    `/proc/${pid}`,
  ]) {
    refused(t, l, ['cat', path], /runs as the daemon's user|inside/);
  }
  refused(t, l, ['grep', '-f', `/proc/${pid}/./environ`, '/etc/hostname'], /process/);
  refused(t, l, ['grep', `-f/proc/${pid}/environ`, 'x'], /as "\/proc/);
  refused(t, l, ['grep', `-af/proc/${pid}/environ`, 'x'], /process/);
  refused(t, l, ['du', `--files0-from=/proc/${pid}/./environ`], /process/);
  refused(t, l, ['du', '--files0-from', `/proc/self/environ`], /process/);
  refused(t, l, ['grep', '-a', '-r', '--include=environ', 'X', `/proc/${pid}`], /process/);
  refused(t, l, ['grep', '-r', 'X', '/proc'], /contains \/proc/);
  refused(t, l, ['cat', `/proc/${sleeper(t).pid}/environ`], /runs as the daemon's user/, l.cwd);
  refused(t, l, ['cat', '/proc/999999999/environ'], /runs as the daemon's user/);

  // What holds nothing secret stays readable, for the daemon's processes too.
  allowed(t, l, ['cat', '/proc/uptime']);
  allowed(t, l, ['cat', '/proc/self/status']);
  allowed(t, l, ['cat', `/proc/${pid}/stat`]);
  allowed(t, l, ['cat', '/proc/net/dev']);
  allowed(t, l, ['cat', '/proc/mounts']);
  allowed(t, l, ['ls', '/proc']);
  allowed(t, l, ['cat', '/proc/meminfo']);
});

t.test("another user's processes: the kernel guards them, so the guard does not", async (t) => {
  // As if the daemon ran as uid 54321: root's pid 1 and a process of uid 54322 are someone else's.
  const l = layout(t, { uid: 54321 });
  const mine = sleeper(t, { uid: 54321, gid: 54321 });
  const theirs = sleeper(t, { uid: 54322, gid: 54322 });
  refused(t, l, ['cat', `/proc/${mine.pid}/environ`], /runs as the daemon's user/);
  refused(t, l, ['cat', `/proc/${process.pid}/environ`], /runs as the daemon's user/, l.cwd);
  allowed(t, l, ['cat', `/proc/${theirs.pid}/environ`]);
  allowed(t, l, ['cat', '/proc/1/cmdline']);
});

t.test("the daemon's folders, however they are named", async (t) => {
  const l = layout(t);
  writeFileSync(join(l.data, 'backups', 'state-2026-01-31T03-00-00.db'), 'SQLite format 3\0');
  mkdirSync(join(l.data, 'plugin-data', 'webui'));
  writeFileSync(join(l.data, 'plugin-data', 'webui', 'credentials.json'), '{}');
  symlinkSync(join(l.data, 'state.db'), join(l.cwd, 'db-link'));
  symlinkSync(l.data, join(l.outside, 'data-link'));
  refused(t, l, ['cat', join(l.data, 'state.db')], /inside the daemon's data folder/);
  refused(t, l, ['grep', 'x', `${l.data}/backups/state-*.db`], /inside the daemon's data folder/);
  refused(t, l, ['grep', 'x', join(l.data, 'backups', 'state-2026-01-31T03-00-00.db')], /data folder/);
  refused(t, l, ['cat', `${l.data}/plugin-data/webui/credentials.json`], /data folder/);
  refused(t, l, ['cat', '../webui/credentials.json'], /data folder/);
  refused(t, l, ['cat', '../../state.db'], /data folder/);
  refused(t, l, ['cat', `${l.cwd}/../../../${l.data.split('/').at(-1)}/state.db`], /data folder/);
  refused(t, l, ['cat', `/tmp/../${l.data}//./state.db`], /data folder/);
  refused(t, l, ['cat', 'db-link'], /data folder/, l.cwd);
  refused(t, l, ['cat', `${l.outside}/data-link/state.db`], /data folder/);
  refused(t, l, ['ls', '..'], /data folder/);
  refused(t, l, ['cat', join(l.etc, 'config.yaml')], /configuration file/);
  refused(t, l, ['cat', `--file=${l.data}/state.db`], /as "\//);
  refused(t, l, ['cat', `@${l.data}/state.db`], /data folder/);
  // The plugin's own folder is not protected.
  writeFileSync(join(l.cwd, 'notes.txt'), 'x');
  allowed(t, l, ['cat', 'notes.txt']);
  allowed(t, l, ['cat', join(l.cwd, 'notes.txt')]);
  allowed(t, l, ['ls', '-la', '.']);
});

t.test('recursive readers may not read a folder that contains a protected tree', async (t) => {
  const l = layout(t);
  const parent = dirname(l.data);
  refused(t, l, ['grep', '-a', '-r', 'X', l.data], /data folder/);
  refused(t, l, ['grep', '-r', 'X', '/'], /contains \/proc|contains the daemon/);
  refused(t, l, ['grep', '-R', 'X', parent], /contains the daemon's data folder/);
  refused(t, l, ['grep', '--recursive', 'X', parent], /reads folders recursively/);
  refused(t, l, ['grep', '--rec', 'X', parent], /reads folders recursively/);
  refused(t, l, ['grep', '-d', 'recurse', 'X', parent], /reads folders recursively/);
  refused(t, l, ['grep', '--directories=recurse', 'X', parent], /reads folders recursively/);
  refused(t, l, ['rgrep', 'X', parent], /reads folders recursively/);
  refused(t, l, ['du', '-sh', parent], /reads folders recursively/);
  refused(t, l, ['find', parent, '-name', 'x'], /reads folders recursively/);
  refused(t, l, ['ls', '-R', parent], /reads folders recursively/);
  refused(t, l, ['tar', '-cf', '-', parent], /reads folders recursively/);
  refused(t, l, ['tar', 'cf', '-', parent], /reads folders recursively/);
  refused(t, l, ['cp', '-a', parent, l.outside], /reads folders recursively/);
  refused(t, l, ['some-unknown-tool', '-r', parent], /reads folders recursively/);
  refused(t, l, ['du', '-s'], /the working directory/, parent);
  refused(t, l, ['ls'], /the working directory .* is inside the daemon's data folder/, l.data);
  refused(t, l, ['echo', 'hi'], /the working directory/, join(l.data, 'backups'));
  refused(t, l, ['find'], /the working directory/, '/');
  // Not recursive, or not a folder with anything protected in it.
  allowed(t, l, ['ls', '-ltr', parent], l.cwd);
  allowed(t, l, ['ls', '-l', '/']);
  allowed(t, l, ['sort', '-r', join(l.outside, 'notes.txt')]);
  allowed(t, l, ['sed', '-r', 's/a/b/', join(l.outside, 'notes.txt')]);
  allowed(t, l, ['grep', '-r', 'X', l.outside]);
  allowed(t, l, ['grep', '-r', 'X', '.']);
  allowed(t, l, ['find', '.', '-name', '*.txt']);
  allowed(t, l, ['du', '-sh', '.']);
  allowed(t, l, ['df', '-h']);
});

t.test('link-following readers: a bounded walk for links into protected trees', async (t) => {
  const l = layout(t);
  mkdirSync(join(l.outside, 'tree', 'deep'), { recursive: true });
  symlinkSync(l.data, join(l.outside, 'tree', 'deep', 'to-data'));
  refused(t, l, ['grep', '-R', 'X', join(l.outside, 'tree')], /holds the link .*to-data/);
  refused(t, l, ['find', '-L', join(l.outside, 'tree')], /follows links/);
  refused(t, l, ['du', '-L', join(l.outside, 'tree')], /follows links/);
  allowed(t, l, ['grep', '-r', 'X', join(l.outside, 'tree')]);
  allowed(t, l, ['find', join(l.outside, 'tree')]);

  const wide = join(l.outside, 'wide');
  mkdirSync(wide);
  for (let i = 0; i <= MAX_SCAN_ENTRIES; i++) writeFileSync(join(wide, String(i)), '');
  refused(t, l, ['grep', '-R', 'X', wide], new RegExp(`more than ${MAX_SCAN_ENTRIES} entries`));
  allowed(t, l, ['grep', '-r', 'X', wide]);
});

t.test('files that list more files are read ahead', async (t) => {
  const l = layout(t);
  const data = join(l.data, 'state.db');
  writeFileSync(join(l.cwd, 'list0'), `${join(l.outside, 'notes.txt')}\0${data}\0`);
  writeFileSync(join(l.cwd, 'lines'), `${join(l.outside, 'notes.txt')}\n../../state.db\n`);
  writeFileSync(join(l.cwd, 'sums'), `${'0'.repeat(64)}  ${data}\n`);
  writeFileSync(join(l.cwd, 'bsd-sums'), `SHA256 (${data}) = ${'0'.repeat(64)}\n`);
  writeFileSync(join(l.cwd, 'response'), `-n "${data}"\n`);
  writeFileSync(join(l.cwd, 'harmless0'), `${join(l.outside, 'notes.txt')}\0`);
  refused(t, l, ['wc', '--files0-from=list0'], /"list0" lists files to read, and .*data folder/);
  refused(t, l, ['sort', '--files0-from', 'list0'], /lists files to read/);
  refused(t, l, ['du', '--files0-from=list0'], /lists files to read/);
  refused(t, l, ['find', '-files0-from', 'list0'], /lists files to read/);
  refused(t, l, ['tar', '-cf', '-', '-T', 'lines'], /lists files to read/);
  refused(t, l, ['tar', '-cf', '-', '--files-from=lines'], /lists files to read/);
  refused(t, l, ['file', '-f', 'lines'], /lists files to read/);
  refused(t, l, ['sha256sum', '-c', 'sums'], /lists files to read/);
  refused(t, l, ['md5sum', '--check', 'bsd-sums'], /lists files to read/);
  refused(t, l, ['objdump', '@response'], /lists files to read/);
  refused(t, l, ['unknown-tool', '--files-from=lines'], /lists files to read/);
  refused(t, l, ['wc', '--files0-from=/dev/zero'], /not a regular file/);
  allowed(t, l, ['wc', '--files0-from=harmless0']);
  allowed(t, l, ['wc', '--files0-from=missing']);
});

t.test('program reach: recursion, links and lists as each program reads its flags', async (t) => {
  t.match(programReach('grep', ['-rn', 'x']), { recursive: true, followsLinks: false });
  t.match(programReach('grep', ['-Rn', 'x']), { recursive: true, followsLinks: true });
  t.match(programReach('grep', ['-n', 'x']), { recursive: false });
  t.match(programReach('ls', ['-ltr']), { recursive: false });
  t.match(programReach('ls', ['-lR']), { recursive: true, followsLinks: false });
  t.match(programReach('file', ['-r', 'x']), { recursive: false }, "file's -r is raw output");
  t.match(programReach('sort', ['-r']), { recursive: false });
  t.match(programReach('find', ['.', '-follow']), { recursive: true, followsLinks: true });
  t.match(programReach('find', ['-L', '.']), { recursive: true, followsLinks: true });
  t.match(programReach('grep', ['--', '-r']), { recursive: false }, 'after -- nothing is an option');
  t.match(programReach('zzz', ['-r']), { recursive: true, followsLinks: true }, 'an unknown program: recursive and link-following');
  t.same(programReach('tar', ['-cT', 'list', 'x']).lists, [{ file: 'list', format: 'lines' }]);
  t.same(programReach('tar', ['-cTlist']).lists, [{ file: 'list', format: 'lines' }]);
  t.same(programReach('du', ['--files0=l']).lists, [{ file: 'l', format: 'nul' }], 'abbreviated long option');
});
