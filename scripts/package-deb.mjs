#!/usr/bin/env node
/**
 * Builds the Debian package homeagent_<version>_<arch>.deb from this checkout (`npm run package:deb`).
 *
 * Why a script and not debhelper: the package is an appliance bundle (Node code plus its
 * production node_modules with native addons built for this machine), not a Debian source
 * package, so it is assembled as a staging tree and packed with `dpkg-deb --root-owner-group`.
 * Native addons are per architecture: the .deb gets this machine's `dpkg --print-architecture`,
 * so an arm64 package must be built on a Pi or another arm64 machine (docs/deploy.md).
 *
 * The production node_modules are a pruned copy of the installed ones (`npm prune --omit=dev`),
 * not a fresh `npm ci --omit=dev`: it needs no registry, and the native addons are exactly the
 * ones built and tested here.
 *
 * Usage: node scripts/package-deb.mjs [--out DIR] [--compression xz|gzip|none] [--level 0-9] [--keep-staging]
 * xz (the default) is the smallest; gzip --level 1 is many times faster (tests). zstd is refused:
 * dpkg on Debian 12 reads it but lintian 2.116 rejects it as not official.
 * Prints the path of the .deb as its last line. Needs a built dist/ (npm run build).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const APP = 'opt/homeagent';
/** Folders of the checkout the daemon reads at run time (PACKAGE_ROOT-relative paths in src/), and tools/ (the companion device client the owner copies to a PC or phone, docs/remote-devices.md). */
const APP_DIRS = ['dist', 'adapters', 'config', 'skills', 'assets', 'tools'];
/** onnxruntime-node ships prebuilt libraries for every platform; only this one's is kept. */
const NODE_ARCH = { amd64: 'x64', arm64: 'arm64', armhf: 'arm' };

function fail(message) {
  console.error(`package-deb: ${message}`);
  process.exit(1);
}

function run(command, args, options = {}) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options })?.trim() ?? '';
}

function walk(dir, onFile) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, onFile);
    else onFile(path, entry);
  }
}

/**
 * The package version: package.json's, with '~' for '-' (Debian sorts 1.0.0~rc.1 before 1.0.0, as
 * npm does), plus a Debian revision ($DEB_REVISION, 1 by default) so that the packaging can be
 * rebuilt without a new release: 0.1.0 → 0.1.0-1.
 */
export function debianVersion(npmVersion, revision = '1') {
  if (!/^[0-9][0-9A-Za-z.+~-]*$/.test(npmVersion)) fail(`package.json version "${npmVersion}" cannot be a Debian version`);
  if (!/^[0-9A-Za-z.+~]+$/.test(revision)) fail(`DEB_REVISION "${revision}" is not a Debian revision`);
  return `${npmVersion.replaceAll('-', '~')}-${revision}`;
}

function copyApp(staging) {
  const app = join(staging, APP);
  mkdirSync(app, { recursive: true });
  for (const dir of APP_DIRS) {
    if (existsSync(join(REPO, dir))) cpSync(join(REPO, dir), join(app, dir), { recursive: true });
  }
  // The unit files name docs/deploy.md as their documentation; the screenshots stay out.
  mkdirSync(join(app, 'docs'), { recursive: true });
  for (const file of readdirSync(join(REPO, 'docs')).filter((name) => name.endsWith('.md'))) {
    cpSync(join(REPO, 'docs', file), join(app, 'docs', file));
  }
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(REPO, file), join(app, file));
  return app;
}

function productionModules(app, arch) {
  // cp -a keeps the symlinks in node_modules/.bin as links and is several times faster than cpSync here.
  run('cp', ['-a', join(REPO, 'node_modules'), join(app, 'node_modules')]);
  run('npm', ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app });
  const onnxBin = join(app, 'node_modules', 'onnxruntime-node', 'bin');
  if (existsSync(onnxBin)) {
    for (const napi of readdirSync(onnxBin)) {
      for (const os of readdirSync(join(onnxBin, napi))) {
        for (const cpu of readdirSync(join(onnxBin, napi, os))) {
          if (os !== 'linux' || cpu !== NODE_ARCH[arch]) rmSync(join(onnxBin, napi, os, cpu), { recursive: true, force: true });
        }
      }
    }
  }
  // node-gyp's object files and dependency lists: only the .node files in build/Release are loaded.
  const leftovers = [];
  const find = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if ((entry.name === 'obj.target' || entry.name === '.deps') && dir.endsWith(join('build', 'Release'))) leftovers.push(path);
      else find(path);
    }
  };
  find(join(app, 'node_modules'));
  for (const path of leftovers) rmSync(path, { recursive: true, force: true });
  tidyModules(join(app, 'node_modules'));
}

/** Files of npm packages that only matter to their authors (linters, publishing, a test addon). */
const AUTHOR_FILES = /^(\.eslintrc(\..+)?|\.npmignore|\.gitignore|\.gitattributes|\.travis\.yml|test_extension\.node)$/;

/**
 * Leaves the production tree as a Debian package expects it: no author-only files, native
 * libraries stripped of debug symbols and not executable (dlopen needs neither).
 */
function tidyModules(modules) {
  const natives = [];
  walk(modules, (path, entry) => {
    if (AUTHOR_FILES.test(entry.name)) rmSync(path, { force: true });
    else if (entry.isFile() && /\.node$|\.so(\.[0-9]+)*$/.test(entry.name)) natives.push(path);
  });
  for (const path of natives) {
    if (readFileSync(path).subarray(0, 4).toString('latin1') !== '\x7fELF') continue;
    run('strip', ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note', path]);
    chmodSync(path, 0o644);
  }
  return natives;
}

/** Shared-library names the native addons need, mapped to the Debian packages that provide them. */
const SONAME_PACKAGES = [
  [/^(libc|libm|libdl|librt|libpthread)\.so\.|^ld-linux/, 'libc6'],
  [/^libstdc\+\+\.so\./, 'libstdc++6'],
  [/^libgcc_s\.so\./, 'libgcc-s1'],
  [/^libsystemd\.so\./, 'libsystemd0'],
];

/**
 * The Depends entries of the native addons, read from their ELF headers (what dpkg-shlibdeps would
 * do in a source package): the libraries they need, and for libc the newest symbol version used.
 */
export function nativeDepends(modules) {
  const packages = new Set();
  let glibc = '';
  walk(modules, (path, entry) => {
    if (!entry.isFile() || !/\.node$|\.so(\.[0-9]+)*$/.test(entry.name)) return;
    if (readFileSync(path).subarray(0, 4).toString('latin1') !== '\x7fELF') return;
    for (const [, soname] of run('objdump', ['-p', path]).matchAll(/^\s*NEEDED\s+(\S+)$/gm)) {
      const known = SONAME_PACKAGES.find(([pattern]) => pattern.test(soname));
      if (known) packages.add(known[1]);
      else if (!soname.startsWith('libonnxruntime'))
        fail(`${relative(modules, path)} needs ${soname}: add its Debian package to SONAME_PACKAGES`);
    }
    for (const [, version] of run('objdump', ['-T', path]).matchAll(/GLIBC_([0-9.]+)/g)) {
      if (!glibc || compareVersions(version, glibc) > 0) glibc = version;
    }
  });
  return [...packages].sort().map((name) => (name === 'libc6' && glibc ? `libc6 (>= ${glibc})` : name));
}

function compareVersions(a, b) {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  return 0;
}

function install(source, target, mode = 0o644) {
  mkdirSync(dirname(target), { recursive: true });
  cpSync(source, target);
  chmodSync(target, mode);
}

function systemFiles(staging) {
  const units = readdirSync(join(REPO, 'systemd')).filter((name) => /\.(service|socket|mount|path)$/.test(name));
  for (const unit of units) install(join(REPO, 'systemd', unit), join(staging, 'usr/lib/systemd/system', unit));
  install(join(REPO, 'systemd/sysusers.d/homeagent.conf'), join(staging, 'usr/lib/sysusers.d/homeagent.conf'));
  install(join(REPO, 'systemd/tmpfiles.d/homeagent.conf'), join(staging, 'usr/lib/tmpfiles.d/homeagent.conf'));
  install(join(REPO, 'udev/99-homeagent.rules'), join(staging, 'usr/lib/udev/rules.d/99-homeagent.rules'));
  // The first-boot notice's script; systemd/homeagent-firstboot.service (shipped with the other units) runs it.
  install(join(REPO, 'image/firstboot/homeagent-firstboot'), join(staging, 'usr/libexec/homeagent/homeagent-firstboot'), 0o755);
  const ctl = join(staging, 'usr/bin/homeagentctl');
  mkdirSync(dirname(ctl), { recursive: true });
  writeFileSync(
    ctl,
    '#!/bin/sh\n# The HomeAgent command line; it talks to the daemon through /run/homeagent/homeagent.sock.\nexec /usr/bin/node /opt/homeagent/dist/src/cli/homeagentctl.js "$@"\n',
  );
  chmodSync(ctl, 0o755);
  // The daemon's own command line (restore, config-migrate, the evaluations), run as the service runs it.
  install(join(REPO, 'image/deb/homeagent'), join(staging, 'usr/bin/homeagent'), 0o755);
}

function docFiles(staging, version, maintainer, date) {
  const doc = join(staging, 'usr/share/doc/homeagent');
  install(join(REPO, 'image/deb/copyright'), join(doc, 'copyright'));
  install(join(REPO, 'image/deb/lintian-overrides'), join(staging, 'usr/share/lintian/overrides/homeagent'));
  const changelog = `homeagent (${version}) stable; urgency=medium\n\n  * Built from the HomeAgent repository, package.json version ${version}.\n\n -- ${maintainer}  ${date}\n`;
  writeFileSync(join(doc, 'changelog.Debian.gz'), gzipSync(changelog, { level: 9 }));
  chmodSync(join(doc, 'changelog.Debian.gz'), 0o644);
}

function control(staging, fields) {
  const debian = join(staging, 'DEBIAN');
  mkdirSync(debian, { recursive: true });
  for (const script of ['postinst', 'prerm', 'postrm']) install(join(REPO, 'image/deb', script), join(debian, script), 0o755);
  // md5sums lets `dpkg --verify` and debsums check the installed files.
  const sums = [];
  walk(staging, (path, entry) => {
    const rel = relative(staging, path);
    if (rel.startsWith('DEBIAN') || !entry.isFile()) return;
    sums.push(`${createHash('md5').update(readFileSync(path)).digest('hex')}  ${rel}`);
  });
  writeFileSync(join(debian, 'md5sums'), `${sums.sort().join('\n')}\n`);
  const text = Object.entries(fields)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([key, value]) => `${key}: ${value}`)
    .join('\n');
  writeFileSync(join(debian, 'control'), `${text}\n`);
}

function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: join(REPO, 'build', 'deb') },
      compression: { type: 'string', default: 'xz' },
      level: { type: 'string' },
      'keep-staging': { type: 'boolean', default: false },
    },
  });
  if (!['xz', 'gzip', 'none'].includes(values.compression)) fail(`unknown --compression ${values.compression}`);
  if (values.level !== undefined && !/^[0-9]$/.test(values.level)) fail(`--level must be 0-9, not ${values.level}`);
  if (!existsSync(join(REPO, 'dist/src/main.js'))) fail('dist/src/main.js is missing: run npm run build first');
  if (!existsSync(join(REPO, 'node_modules'))) fail('node_modules is missing: run npm ci first');
  const started = Date.now();
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
  const arch = run('dpkg', ['--print-architecture']);
  if (!NODE_ARCH[arch]) fail(`architecture ${arch} is not supported (amd64, arm64, armhf)`);
  const version = debianVersion(pkg.version, process.env.DEB_REVISION || '1');
  const maintainer =
    process.env.DEBFULLNAME && process.env.DEBEMAIL
      ? `${process.env.DEBFULLNAME} <${process.env.DEBEMAIL}>`
      : 'HomeAgent maintainers <homeagent@example.org>';
  const epoch = process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) * 1000 : Date.now();
  const date = new Date(epoch).toUTCString().replace(/GMT$/, '+0000');

  const out = resolve(values.out);
  const staging = join(out, `homeagent_${version}_${arch}`);
  rmSync(staging, { recursive: true, force: true });
  const app = copyApp(staging);
  productionModules(app, arch);
  systemFiles(staging);
  docFiles(staging, version, maintainer, date);
  // Files from the checkout may carry a group-write bit (umask 002); the package's must not.
  run('chmod', ['-R', 'u+rwX,go+rX,go-w', staging]);
  const installedKiB = Number(run('du', ['-sk', '--exclude=DEBIAN', staging]).split(/\s+/)[0]);
  control(staging, {
    Package: 'homeagent',
    Version: version,
    Architecture: arch,
    Maintainer: maintainer,
    'Installed-Size': String(installedKiB),
    // Debian 12's nodejs is 18: take Node 20+ from NodeSource (package "nodejs") or Debian 13.
    Depends: ['nodejs (>= 20)', 'systemd (>= 247)', 'init-system-helpers (>= 1.54~)', ...nativeDepends(join(app, 'node_modules'))].join(
      ', ',
    ),
    // pocketsphinx: offline voice commands and the local wake word (plugin.voice.stt.backend auto).
    Recommends: 'alsa-utils, espeak-ng, fswebcam, pocketsphinx, pocketsphinx-en-us',
    Suggests: 'mosquitto, gpiod, i2c-tools',
    Section: 'misc',
    Priority: 'optional',
    Description: `home AI agent appliance for the Raspberry Pi\n${longDescription()}`,
  });
  const deb = join(out, `homeagent_${version}_${arch}.deb`);
  rmSync(deb, { force: true });
  const compression = [`-Z${values.compression}`, ...(values.level ? [`-z${values.level}`] : [])];
  run('dpkg-deb', ['--root-owner-group', ...compression, '--build', staging, deb], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (!values['keep-staging']) rmSync(staging, { recursive: true, force: true });
  const size = statSync(deb).size;
  console.error(
    `package-deb: ${relative(process.cwd(), deb) || deb}: ${(size / 1e6).toFixed(1)} MB, installed ${(installedKiB / 1024).toFixed(0)} MiB, built in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(deb);
}

/** The control file's extended description: each line indented by one space, blank lines as " .". */
function longDescription() {
  const text = [
    'A home AI agent appliance for the Raspberry Pi: voice, web, chat and command',
    'line in; GPIO, I2C and MQTT out; local memory and plugins.',
    '',
    'Runs as the hardened systemd service homeagent.service under its own user,',
    'with access to the GPIO, I2C, sound and video devices through the gpio, i2c,',
    'audio and video groups; commands it runs for the agent run in the separate',
    'homeagent-cmd service as another user. Data stays in /var/lib/homeagent across',
    'upgrades and removal; purge deletes it. Configuration:',
    '/etc/homeagent/config.yaml (optional). Command line: homeagentctl (talks to',
    'the daemon) and homeagent (restore, config-migrate, evaluations).',
  ];
  return text.map((line) => (line === '' ? ' .' : ` ${line}`)).join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
