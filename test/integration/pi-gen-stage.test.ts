/**
 * The Raspberry Pi image stage (image/pi-gen) and the first-boot notice (image/firstboot,
 * systemd/homeagent-firstboot.service). pi-gen itself needs root, loop devices and qemu, so the
 * stage is checked the way pi-gen would meet it without building an image: shellcheck on every
 * script, the names and executable bits pi-gen looks for, and a dry run of each step's 00-run.sh
 * against a temporary ROOTFS_DIR, with pi-gen's on_chroot/copy_previous and the network tools
 * (curl, gpg) replaced by recorders. Nothing outside the temporary folders is touched.
 * The first-boot script runs for real, against credentials and sessions written by the webui
 * plugin's own stores, with temporary folders standing in for /etc/issue.d, /etc/motd.d and its
 * state folder; the password must reach the console file and never its output (the journal).
 */
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { CredentialStore } from '../../plugins/webui/credentials.js';
import { SessionStore } from '../../plugins/webui/sessions.js';
import { loadConfig } from '../../src/config/loader.js';
import { REPO_ROOT } from '../helpers/daemon.js';
import { findTool, requireTool } from '../helpers/tools.js';
import { captureLogs } from '../unit/fixtures/support.js';

const PI_GEN = join(REPO_ROOT, 'image', 'pi-gen');
const STAGE = join(PI_GEN, 'stage-homeagent');
const FIRSTBOOT = join(REPO_ROOT, 'image', 'firstboot', 'homeagent-firstboot');
const FIRSTBOOT_UNIT = join(REPO_ROOT, 'systemd', 'homeagent-firstboot.service');
const FIRSTBOOT_PATH_UNIT = join(REPO_ROOT, 'systemd', 'homeagent-firstboot.path');
/** Where the package installs the script; the unit runs it from there and the stage checks it. */
const FIRSTBOOT_INSTALLED = '/usr/libexec/homeagent/homeagent-firstboot';
/** The steps pi-gen runs in a sub-stage folder (scripts/common, run_sub_stage), besides files/. */
const STEP = /^[0-9]{2}-(run\.sh|run-chroot\.sh|packages|packages-nr|debconf|patches)$/;
const ci = process.env.CI !== undefined && process.env.CI !== '';

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const subStages = readdirSync(STAGE, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const runScripts = subStages.flatMap((dir) =>
  readdirSync(join(STAGE, dir))
    .filter((f) => /^[0-9]{2}-run(-chroot)?\.sh$/.test(f))
    .map((f) => join(dir, f)),
);
const isExecutable = (path: string) => (statSync(path).mode & 0o111) === 0o111;

t.test('every script of the stage and the first-boot script is shellcheck clean', async (t) => {
  if (!requireTool(t, 'shellcheck')) return;
  const stageFiles = ['prerun.sh', 'EXPORT_IMAGE', ...runScripts];
  const stage = await run('shellcheck', ['-x', ...stageFiles], { cwd: STAGE });
  t.equal(stage.stdout + stage.stderr, '', `shellcheck -x ${stageFiles.join(' ')}`);
  t.equal(stage.code, 0);
  const config = await run('shellcheck', ['-x', 'config'], { cwd: PI_GEN });
  t.equal(config.stdout + config.stderr, '', 'the pi-gen config file (sourced by build.sh)');
  t.equal(config.code, 0);
  const firstboot = await run('shellcheck', ['-x', '-s', 'sh', FIRSTBOOT]);
  t.equal(firstboot.stdout + firstboot.stderr, '', 'the first-boot script (POSIX sh)');
  t.equal(firstboot.code, 0);
});

t.test('the stage has the layout pi-gen expects', (t) => {
  t.ok(isExecutable(join(STAGE, 'prerun.sh')), 'prerun.sh is executable');
  t.match(readFileSync(join(STAGE, 'prerun.sh'), 'utf8'), /copy_previous/, 'prerun.sh starts from the previous stage');
  t.match(readFileSync(join(STAGE, 'EXPORT_IMAGE'), 'utf8'), /^IMG_SUFFIX="-homeagent"$/m, 'EXPORT_IMAGE names the image');
  t.same(
    readdirSync(STAGE).filter((name) => !['prerun.sh', 'EXPORT_IMAGE'].includes(name) && !subStages.includes(name)),
    [],
    'nothing else at the top of the stage',
  );
  t.same(subStages, ['00-node', '01-homeagent', '02-hostname'], 'numbered sub-stages, Node before the package that needs it');
  for (const dir of subStages) {
    t.match(dir, /^[0-9]{2}-[a-z0-9-]+$/, `${dir}: a sub-stage name pi-gen runs in order`);
    for (const name of readdirSync(join(STAGE, dir))) {
      if (name === 'files') continue;
      t.match(name, STEP, `${dir}/${name} is a step pi-gen knows`);
      const path = join(STAGE, dir, name);
      if (name.endsWith('.sh')) {
        t.ok(isExecutable(path), `${dir}/${name} is executable`);
        t.ok(readFileSync(path, 'utf8').startsWith('#!/bin/bash -e\n'), `${dir}/${name} stops at the first failing command`);
      } else {
        t.notOk(statSync(path).mode & 0o111, `${dir}/${name} is data, not executable`);
      }
      if (/packages/.test(name)) {
        const packages = readFileSync(path, 'utf8').split(/\s+/).filter(Boolean);
        t.ok(packages.length > 0, `${dir}/${name} lists packages`);
        for (const p of packages) t.match(p, /^[a-z0-9][a-z0-9.+-]+$/, `${p} is a Debian package name`);
        t.notOk(packages.includes('nodejs'), 'nodejs comes from 00-node (Debian 12 has only Node 18)');
      }
    }
  }
  t.end();
});

t.test("the image's configuration is valid and opens the web page to the household's network", (t) => {
  const file = join(STAGE, '01-homeagent', 'files', 'config.yaml');
  const loaded = loadConfig({ file, env: {} });
  const webui = (loaded.config as unknown as { plugin: { webui: { host: string; port: number } } }).plugin.webui;
  t.equal(webui.host, '0.0.0.0');
  t.equal(webui.port, 8080, 'the port the first-boot notice shows by default');
  t.end();
});

/** A copy of the stage and an empty root file system, with recorders for what pi-gen provides. */
function dryRunSetup(t: Test) {
  const dir = t.testdir({});
  const stage = join(dir, 'stage-homeagent');
  cpSync(STAGE, stage, { recursive: true });
  const rootfs = join(dir, 'rootfs');
  mkdirSync(join(rootfs, 'etc', 'apt'), { recursive: true });
  mkdirSync(join(rootfs, 'tmp'), { recursive: true });
  writeFileSync(join(rootfs, 'etc', 'hostname'), 'raspberrypi\n');
  writeFileSync(join(rootfs, 'etc', 'hosts'), '127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const calls = join(dir, 'calls.log');
  const chroot = join(dir, 'chroot.log');
  // The network tools a NodeSource build uses on the host: record the call, answer a fixed key.
  writeFileSync(join(bin, 'curl'), `#!/bin/sh\necho "curl $*" >>'${calls}'\necho FAKE-ARMORED-KEY\n`);
  writeFileSync(join(bin, 'gpg'), `#!/bin/sh\necho "gpg $*" >>'${calls}'\nsed 's/ARMORED/BINARY/'\n`);
  for (const tool of ['curl', 'gpg']) chmodSync(join(bin, tool), 0o755);
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    ROOTFS_DIR: rootfs,
    ARCH: 'arm64',
    FIRST_USER_NAME: 'owner',
    CHROOT_LOG: chroot,
    // pi-gen exports these bash functions to the step scripts (export -f).
    'BASH_FUNC_on_chroot%%': '() { printf "%s\\n" "--- on_chroot" >> "$CHROOT_LOG"; cat >> "$CHROOT_LOG"; }',
    'BASH_FUNC_copy_previous%%': '() { mkdir -p "$ROOTFS_DIR"; echo copy_previous >> "$CHROOT_LOG"; }',
  };
  const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
  return {
    dir,
    stage,
    rootfs,
    env,
    chrootLog: () => read(chroot),
    calls: () => read(calls),
    step: (sub: string, extra: NodeJS.ProcessEnv = {}) => run('./00-run.sh', [], { cwd: join(stage, sub), env: { ...env, ...extra } }),
  };
}

/** A real (tiny) Debian package with the given name and architecture, as the builder would drop it. */
async function fakeDeb(scratch: string, dir: string, name: string, arch: string): Promise<string> {
  const root = join(scratch, `deb-${name}-${arch}`);
  mkdirSync(join(root, 'DEBIAN'), { recursive: true });
  writeFileSync(
    join(root, 'DEBIAN', 'control'),
    `Package: ${name}\nVersion: 1.0.0-1\nArchitecture: ${arch}\nMaintainer: Test <test@example.org>\nDescription: test package\n`,
  );
  const deb = join(dir, `${name}_1.0.0-1_${arch}.deb`);
  const built = await run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', root, deb]);
  if (built.code !== 0) throw new Error(`dpkg-deb failed: ${built.stderr}`);
  return deb;
}

t.test('prerun.sh copies the previous stage only when the stage has no root file system yet', async (t) => {
  const s = dryRunSetup(t);
  rmSync(s.rootfs, { recursive: true });
  const fresh = await run('./prerun.sh', [], { cwd: s.stage, env: s.env });
  t.equal(fresh.code, 0, fresh.stderr);
  t.equal(s.chrootLog(), 'copy_previous\n', 'a fresh build starts from stage2');
  const resumed = await run('./prerun.sh', [], { cwd: s.stage, env: s.env });
  t.equal(resumed.code, 0, resumed.stderr);
  t.equal(s.chrootLog(), 'copy_previous\n', 'a resumed build keeps its root file system');
});

t.test('00-node installs a nodejs .deb from files/ when the builder dropped one', async (t) => {
  if (!requireTool(t, 'dpkg-deb')) return;
  const s = dryRunSetup(t);
  await fakeDeb(s.dir, join(s.stage, '00-node', 'files'), 'nodejs', 'arm64');
  const result = await s.step('00-node');
  t.equal(result.code, 0, result.stderr);
  const log = s.chrootLog();
  t.match(log, /apt-get -o Acquire::Retries=3 install -y \/tmp\/nodejs\.deb/, 'apt installs the dropped package inside the image');
  t.match(log, /node -e 'process\.exit\(Number\(process\.versions\.node\.split\("\."\)\[0\]\) >= 20 \? 0 : 1\)'/, 'then checks Node >= 20');
  t.notOk(existsSync(join(s.rootfs, 'tmp', 'nodejs.deb')), 'the copy in the image is removed');
  t.equal(s.calls(), '', 'no network: neither curl nor gpg ran');
  t.notOk(existsSync(join(s.rootfs, 'etc', 'apt', 'sources.list.d', 'nodesource.list')), 'no NodeSource repository');

  writeFileSync(join(s.stage, '00-node', 'files', 'nodejs_2.0.0-1_arm64.deb'), '');
  const two = await s.step('00-node');
  t.not(two.code, 0, 'two candidate packages stop the build');
  t.match(two.stderr, /exactly one nodejs_\*_arm64\.deb .*found 2/);
});

t.test("00-node adds NodeSource's repository when files/ has no nodejs package", async (t) => {
  const s = dryRunSetup(t);
  const result = await s.step('00-node');
  t.equal(result.code, 0, result.stderr);
  // The two ends of a pipe start together: their records may come in either order.
  t.same(
    s.calls().split('\n').filter(Boolean).sort(),
    ['curl -fsSL https://deb.nodesource.com/gpgkey/nodesource-repo.gpg.key', 'gpg --dearmor'],
    'key fetched and dearmored',
  );
  t.equal(readFileSync(join(s.rootfs, 'etc/apt/keyrings/nodesource.gpg'), 'utf8'), 'FAKE-BINARY-KEY\n', 'keyring in the image');
  t.equal(
    readFileSync(join(s.rootfs, 'etc/apt/sources.list.d/nodesource.list'), 'utf8'),
    'deb [signed-by=/etc/apt/keyrings/nodesource.gpg] https://deb.nodesource.com/node_20.x nodistro main\n',
  );
  t.match(readFileSync(join(s.rootfs, 'etc/apt/preferences.d/nodesource'), 'utf8'), /Pin: origin deb\.nodesource\.com\nPin-Priority: 600/);
  t.match(s.chrootLog(), /apt-get -o Acquire::Retries=3 update\napt-get -o Acquire::Retries=3 install -y nodejs\n/);

  const wrong = await s.step('00-node', { HOMEAGENT_NODE_SOURCE: 'debian' });
  t.not(wrong.code, 0, 'an unknown HOMEAGENT_NODE_SOURCE stops the build');
  const forced = await s.step('00-node', { HOMEAGENT_NODE_SOURCE: 'local' });
  t.not(forced.code, 0, 'local without a package in files/ stops the build');
  t.match(forced.stderr, /found 0/);
});

t.test('01-homeagent installs the package, the configuration and enables both units', async (t) => {
  if (!requireTool(t, 'dpkg-deb')) return;
  const s = dryRunSetup(t);
  const files = join(s.stage, '01-homeagent', 'files');
  await fakeDeb(s.dir, files, 'homeagent', 'arm64');
  const result = await s.step('01-homeagent');
  t.equal(result.code, 0, result.stderr);
  const log = s.chrootLog();
  t.match(log, /apt-get -o Acquire::Retries=3 install -y \/tmp\/homeagent\.deb/, 'the package goes in through apt (its Depends)');
  t.notOk(existsSync(join(s.rootfs, 'tmp', 'homeagent.deb')), 'the copy in the image is removed');
  const config = join(s.rootfs, 'etc/homeagent/config.yaml');
  t.equal(readFileSync(config, 'utf8'), readFileSync(join(files, 'config.yaml'), 'utf8'), 'config.yaml in /etc/homeagent');
  t.equal(statSync(config).mode & 0o777, 0o640, 'readable by root and the service group only');
  t.match(log, /chown root:homeagent \/etc\/homeagent\/config\.yaml/, 'the group is set inside the image, where it exists');
  t.match(log, /systemctl enable homeagent\.service/);
  t.match(log, new RegExp(`test -x ${FIRSTBOOT_INSTALLED}`), 'the first-boot script must be in the package');
  t.match(log, /systemctl enable homeagent-firstboot\.service homeagent-firstboot\.path/, 'the notice and its path unit');
  t.match(log, /if id -u "owner" .*usermod -a -G homeagent "owner"/, 'the login user may use homeagentctl');

  const renamed = await s.step('01-homeagent', { FIRST_USER_NAME: 'homeagent' });
  t.not(renamed.code, 0, 'a login user called homeagent is refused');
  t.match(renamed.stderr, /FIRST_USER_NAME must not be homeagent/);

  rmSync(join(files, 'homeagent_1.0.0-1_arm64.deb'));
  await fakeDeb(s.dir, files, 'homeagent', 'amd64');
  const amd64 = await s.step('01-homeagent');
  t.not(amd64.code, 0, 'a package for another architecture is refused');
  t.match(amd64.stderr, /built for amd64, the image is arm64/);
});

t.test('02-hostname names the Pi homeagent (or HOMEAGENT_HOSTNAME) in /etc/hostname and /etc/hosts', async (t) => {
  const s = dryRunSetup(t);
  const result = await s.step('02-hostname');
  t.equal(result.code, 0, result.stderr);
  t.equal(readFileSync(join(s.rootfs, 'etc/hostname'), 'utf8'), 'homeagent\n');
  t.equal(readFileSync(join(s.rootfs, 'etc/hosts'), 'utf8'), '127.0.0.1\tlocalhost\n127.0.1.1\thomeagent\n', 'the 127.0.1.1 line replaced');

  writeFileSync(join(s.rootfs, 'etc/hosts'), '127.0.0.1\tlocalhost\n');
  const other = await s.step('02-hostname', { HOMEAGENT_HOSTNAME: 'kitchen-pi' });
  t.equal(other.code, 0, other.stderr);
  t.equal(readFileSync(join(s.rootfs, 'etc/hostname'), 'utf8'), 'kitchen-pi\n');
  t.equal(readFileSync(join(s.rootfs, 'etc/hosts'), 'utf8'), '127.0.0.1\tlocalhost\n127.0.1.1\tkitchen-pi\n', 'or added');

  const bad = await s.step('02-hostname', { HOMEAGENT_HOSTNAME: 'kitchen_pi/../x' });
  t.not(bad.code, 0, 'a name that is not a host name is refused');
  t.equal(readFileSync(join(s.rootfs, 'etc/hostname'), 'utf8'), 'kitchen-pi\n', 'and nothing is written');
});

/** Temporary stand-ins for the webui plugin's data folder, /etc/issue.d, /etc/motd.d and the state folder. */
function firstbootSetup(t: Test) {
  const dir = t.testdir({ webui: {}, issue: {}, motd: {}, state: {} });
  const paths = {
    webui: join(dir, 'webui'),
    issue: join(dir, 'issue', 'homeagent.issue'),
    motd: join(dir, 'motd', 'homeagent'),
    done: join(dir, 'state', 'done'),
  };
  const firstboot = (...extra: string[]) =>
    run(
      FIRSTBOOT,
      [
        '--webui-data',
        paths.webui,
        '--issue-dir',
        dirname(paths.issue),
        '--motd-dir',
        dirname(paths.motd),
        '--state-dir',
        dirname(paths.done),
        '--no-reload',
        ...extra,
      ],
      // Only what the unit gives it: node on the PATH, no inherited test variables.
      { env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` } },
    );
  const sessions = () =>
    new SessionStore({ dataDir: paths.webui, ttlMs: () => 60_000, maxSessions: () => 4, log: captureLogs().logs.child('plugin.webui') });
  return { dir, paths, firstboot, sessions };
}

t.test('first boot: the console shows the address and the password until the first web login', async (t) => {
  const f = firstbootSetup(t);
  const before = await f.firstboot();
  t.equal(before.code, 0, before.stderr);
  t.match(
    readFileSync(f.paths.issue, 'utf8'),
    /HomeAgent is starting; its web page will be at\n {4}http:\/\/\\n\.local:8080\/ {3}or {3}http:\/\/\\4:8080\//,
  );
  t.notOk(existsSync(f.paths.done), 'not done while there is no password yet');

  const store = new CredentialStore({ dataDir: f.paths.webui });
  const { credentials } = store.load();
  const ready = await f.firstboot();
  t.equal(ready.code, 0, ready.stderr);
  const issue = readFileSync(f.paths.issue, 'utf8');
  t.match(issue, `Admin password: ${credentials.password}\n`, 'the password on the console');
  t.match(issue, 'http://\\n.local:8080/   or   http://\\4:8080/', 'agetty fills in the host name and the address');
  t.notMatch(issue, credentials.api_key, 'never the API key');
  t.equal(statSync(f.paths.issue).mode & 0o777, 0o600, 'the issue file with the password is root-only (agetty runs as root)');
  const motd = readFileSync(f.paths.motd, 'utf8');
  t.equal(
    motd,
    `HomeAgent web page: http://${hostname()}.local:8080/\n  \`sudo homeagentctl webui credentials\` shows the admin password and the API key.\n`,
    'SSH logins get the address and how to see the password',
  );
  t.equal(statSync(f.paths.motd).mode & 0o777, 0o644);
  t.notMatch(ready.stdout + ready.stderr, credentials.password, 'the password never reaches the journal');
  t.match(ready.stdout, /the console shows the web page address and the admin password until the first login/);
  t.notOk(existsSync(f.paths.done));
  t.same(readdirSync(dirname(f.paths.issue)), ['homeagent.issue'], 'no temporary file left behind');

  const again = await f.firstboot();
  t.equal(again.code, 0, again.stderr);
  t.match(readFileSync(f.paths.issue, 'utf8'), `Admin password: ${credentials.password}\n`, 'a reboot before any login shows it again');

  const sessions = f.sessions();
  sessions.load();
  sessions.create();
  const after = await f.firstboot();
  t.equal(after.code, 0, after.stderr);
  const cleared = readFileSync(f.paths.issue, 'utf8');
  t.notMatch(cleared, credentials.password, 'after the first login the password is gone from the console');
  t.equal(
    cleared,
    'HomeAgent web page: http://\\n.local:8080/   or   http://\\4:8080/\n`sudo homeagentctl webui credentials` shows the admin password and the API key.\n\n',
    'the address stays',
  );
  t.equal(statSync(f.paths.issue).mode & 0o777, 0o644, 'nothing secret left: readable by all');
  t.ok(existsSync(f.paths.done), 'the marker stops the unit at later boots');
  t.match(after.stdout, /the owner has logged in to the web page or replaced the password/);
  t.notMatch(after.stdout + after.stderr, credentials.password);
});

t.test('first boot: a replaced password takes the password off the console too', async (t) => {
  const f = firstbootSetup(t);
  const store = new CredentialStore({ dataDir: f.paths.webui, now: () => Date.parse('2025-01-01T00:00:00Z') });
  const { credentials } = store.load();
  await f.firstboot('--port', '8443');
  t.match(readFileSync(f.paths.issue, 'utf8'), 'http://\\n.local:8443/   or   http://\\4:8443/', '--port is shown');
  const reset = new CredentialStore({ dataDir: f.paths.webui, now: () => Date.parse('2025-01-02T00:00:00Z') });
  reset.load();
  const fresh = reset.reset('password');
  const result = await f.firstboot('--port', '8443');
  t.equal(result.code, 0, result.stderr);
  const issue = readFileSync(f.paths.issue, 'utf8');
  t.notMatch(issue, credentials.password);
  t.notMatch(issue, fresh.password, 'nor the new one: the owner chose to take over');
  t.ok(existsSync(f.paths.done));
  t.notMatch(result.stdout + result.stderr, fresh.password);
});

t.test('first boot: a damaged credentials file or a bad argument fails without showing a secret', async (t) => {
  const f = firstbootSetup(t);
  const secret = 'abcde-fghjk-mnpqr-stuvw';
  // Node's JSON.parse errors quote the text around the fault: the script must not pass them on.
  writeFileSync(join(f.paths.webui, 'credentials.json'), `{\n  "password": "${secret}",\n  "api_key": "ha_x" oops\n`);
  const damaged = await f.firstboot();
  t.equal(damaged.code, 1, 'the unit fails, so systemctl --failed shows it');
  t.match(damaged.stderr, /cannot be read as JSON; the console shows the address only/);
  t.notMatch(damaged.stdout + damaged.stderr, secret);
  t.notMatch(readFileSync(f.paths.issue, 'utf8'), secret);

  writeFileSync(join(f.paths.webui, 'credentials.json'), JSON.stringify({ password: 'back\\slash-pass', api_key: 'ha_y' }));
  const unprintable = await f.firstboot();
  t.equal(unprintable.code, 0, unprintable.stderr);
  t.notMatch(readFileSync(f.paths.issue, 'utf8'), 'slash-pass', 'a password agetty would mangle is not shown');
  t.match(unprintable.stdout, /characters the console cannot show/);

  const port = await f.firstboot('--port', '80a');
  t.equal(port.code, 1);
  t.match(port.stderr, /--port must be a number/);
  const missing = await f.firstboot('--issue-dir');
  t.equal(missing.code, 1);
  t.match(missing.stderr, /--issue-dir needs a value/);
});

t.test('the first-boot unit runs the installed script and passes systemd-analyze', async (t) => {
  const text = readFileSync(FIRSTBOOT_UNIT, 'utf8');
  t.match(text, new RegExp(`^ExecStart=${FIRSTBOOT_INSTALLED}$`, 'm'));
  t.match(text, /^After=homeagent\.service$/m);
  t.match(text, /^ConditionPathExists=!\/var\/lib\/homeagent-firstboot\/done$/m, 'skipped once the script left its marker');
  t.match(text, /^StateDirectory=homeagent-firstboot$/m, 'which is where $STATE_DIRECTORY points');
  t.notMatch(text, /^[A-Za-z]+=[^\n]*[ \t][#;]/m, 'no trailing comments');
  // The path unit runs it again at the first web login (sessions.json) or a password reset
  // (credentials.json): the files the script itself reads to decide that the owner took over.
  const pathText = readFileSync(FIRSTBOOT_PATH_UNIT, 'utf8');
  t.match(pathText, /^PathChanged=\/var\/lib\/homeagent\/plugin-data\/webui\/sessions\.json$/m);
  t.match(pathText, /^PathChanged=\/var\/lib\/homeagent\/plugin-data\/webui\/credentials\.json$/m);
  t.match(pathText, /^Unit=homeagent-firstboot\.service$/m);
  t.match(pathText, /^ConditionPathExists=!\/var\/lib\/homeagent-firstboot\/done$/m, 'not watching once the owner took over');
  t.notMatch(pathText, /^[A-Za-z]+=[^\n]*[ \t][#;]/m, 'no trailing comments');
  t.ok(isExecutable(FIRSTBOOT), 'the script is executable');
  const analyze = findTool('systemd-analyze');
  if (!analyze) {
    if (ci) t.fail('systemd-analyze not found (install systemd); CI never skips');
    else t.comment('systemd-analyze not found (install systemd): verify and security skipped');
    return;
  }
  const dir = t.testdir({});
  const unit = join(dir, 'homeagent-firstboot.service');
  writeFileSync(unit, text.replace(/^ExecStart=.*$/m, `ExecStart=${FIRSTBOOT}`));
  const pathUnit = join(dir, 'homeagent-firstboot.path');
  writeFileSync(pathUnit, readFileSync(FIRSTBOOT_PATH_UNIT, 'utf8'));
  const verify = await run(analyze, ['verify', '--man=no', unit, pathUnit]);
  t.equal(verify.stdout + verify.stderr, '', 'systemd-analyze verify has nothing to say (the service and its path unit)');
  t.equal(verify.code, 0);
  const security = await run(analyze, ['security', '--offline=true', unit]);
  const score = /Overall exposure level for homeagent-firstboot\.service: ([0-9.]+)/.exec(security.stdout);
  t.ok(score, 'an exposure score');
  t.ok(Number(score?.[1]) <= 1.5, `exposure ${score?.[1]} is at most 1.5 (root, but with one capability and no network)`);
});
