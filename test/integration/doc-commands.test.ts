/**
 * The doc check (issue 29): every `homeagentctl …` command line quoted in README.md, docs/**\/*.md
 * and devices/*\/README.md (fenced code blocks and inline code) is given to the real homeagentctl
 * against one real daemon, and the test fails, naming file:line, when homeagentctl refuses it as a
 * usage error (exit 64: unknown command, option or argument). What the daemon answers does not
 * matter: a plugin that is off, missing hardware or an absent LLM are answers, not refusals.
 *
 * How a quoted line becomes command lines (the rules a doc line must fit):
 * - In a fenced block, a line that starts with `homeagentctl `, `sudo homeagentctl ` or
 *   `npm run ctl -- ` (after an optional `$ ` prompt) is a command; it ends at a ` #` comment or at
 *   two spaces (the text of a command table). Other lines (output, shell pipes) are not checked.
 *   A line whose comment says `# exits 64` shows a refusal on purpose: it must be refused.
 *   Inline code that starts with `homeagentctl ` is a command (it may run over a line break).
 * - Synopses are expanded: ` | ` between words separates alternatives (a later one that starts
 *   with a flag continues the words before the first flag, `memory forget --event ID`; one that
 *   starts with another word continues the command word, `gpio read PIN`); `a|b` inside a word
 *   takes the first (`0|1` → `0`); `[…]` optional parts are checked both left out and put in.
 *   An alternative that elides with `...`/`…` is not checked.
 * - Placeholders (an unquoted word in capitals such as SENSOR, FILE or N, and `<name>` anywhere)
 *   are filled from SAMPLES (flag-specific first: `--qos N` is 1). A placeholder not in SAMPLES
 *   fails the test, so a new one is added there rather than silently skipped. Relative files the
 *   lines name exist in the working directory (the daemon's data directory) as sample files.
 * - Parse-only (read by homeagentctl's parser in this process, not run): `chat` without `-m` (a
 *   terminal conversation) and `kb import` (the daemon would read a directory of this machine).
 *   `models install` from an http(s) URL is never run (nothing may download); none is quoted now.
 *
 * One in-process daemon with simulated GPIO pins and a simulated I2C sensor serves every line, and
 * homeagentctl runs in this process too (runHomeagentctl, what the binary runs, with `--socket`
 * put first, the daemon's data directory as working directory, and empty stdin), a few lines at a
 * time; one spawned homeagentctl shows that the binary exits 64 for the same refusal.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import t from 'tap';
import { COMMAND_WORDS, readCommandLine } from '../../src/cli/command-line.js';
import { runHomeagentctl } from '../../src/cli/run-homeagentctl.js';
import { REPO_ROOT, tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';

const USAGE_EXIT = 64;
const PARALLEL = 4;

const SOCKET_SAMPLE = '@socket';

/** Sample values for placeholders: `FLAG PLACEHOLDER` first, then the placeholder alone. */
const SAMPLES: Readonly<Record<string, string>> = {
  '--qos N': '1',
  '--limit N': '5',
  '--depth N': '2',
  '--id N': '7',
  '--timeout MS': '5000',
  '--press MS': '100',
  '--sha256 X': '0'.repeat(64),
  '--sha256 HEX': '0'.repeat(64),
  '--domain D': 'switch',
  '--area A': 'kitchen',
  '--category C': 'notes',
  '--endpoint E': '1',
  '--file F': 'sample.md',
  '--out FILE': 'export.jsonl',
  '--db NAME': 'state',
  N: '5',
  MS: '100',
  ID: '1',
  NAME: 'timer',
  FILE: 'sample.txt',
  DIR: 'sample-dir',
  SRC: 'sample-dir',
  TEXT: 'hello',
  KEY: 'core.agent.max_tool_turns',
  VALUE: '10',
  PREFIX: 'core',
  CATEGORY: 'notes',
  CODE: 'K7QX2M',
  PIN: 'hall_button',
  BUS: '1',
  SENSOR: 'living_room',
  ENTITY: 'switch.hall_relay',
  SERVICE: 'turn_on',
  JSON: '{}',
  TOPIC: 'homeagent/doc-check',
  PAYLOAD: 'on',
  SECONDS: '60',
  FROM: 'lamp',
  TO: 'hall_lamp',
  DEVICE: 'lamp',
  GROUP: 'bedroom_lights',
  TOKEN: 'doc-check-token',
  '<name>': 'timer',
  '<key>': 'enabled',
  '<id>': '1',
  '<json>': '[]',
  '<TOKEN>': 'doc-check-token',
  '<command>': 'status',
  // The daemon's socket (ctlInProcess puts it in).
  '--socket PATH': SOCKET_SAMPLE,
};

/**
 * Whether homeagentctl's usage error refuses the line. Prose names commands without their arguments
 * (`homeagentctl config set` stores …), so for inline code only an unknown command, subcommand or
 * option, or another command's flag, is a refusal; a line in a code block must be complete.
 */
function refuses(line: Quoted, message: string): boolean {
  return !line.inline || /^(homeagentctl: )?(unknown |--\S+ (belongs|does not belong) to )/.test(message);
}

/** Pins and a sensor on simulated back ends, so the gpio and i2c lines reach a real plugin. */
const CONFIG = {
  plugin: {
    gpio: {
      backend: 'simulated',
      pins: [
        { id: 'hall_button', bcm: 22, direction: 'in', domain: 'button' },
        { id: 'doorbell', bcm: 23, direction: 'in', domain: 'button' },
        { id: 'hall_relay', bcm: 17, direction: 'out', safe: 0 },
      ],
    },
    i2c: { buses: [{ bus: 1, backend: 'simulated' }], sensors: [{ id: 'living_room', driver: 'bme280', bus: 1 }] },
  },
};

interface Quoted {
  /** `docs/mqtt.md:112`. */
  where: string;
  /** The command as written, after `homeagentctl `. */
  text: string;
  /** Inline code in prose: it may name a command without its arguments. */
  inline: boolean;
  /** Shown refused on purpose (`# exits 64`). */
  refusedOnPurpose?: boolean;
}

interface Planned extends Quoted {
  argv: string[];
}

// ---- finding the quoted lines ----

function markdownFiles(): string[] {
  const files = [join(REPO_ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(REPO_ROOT, 'docs'));
  for (const folder of ['devices', 'plugins']) {
    for (const name of readdirSync(join(REPO_ROOT, folder)).sort()) {
      const readme = join(REPO_ROOT, folder, name, 'README.md');
      try {
        if (statSync(readme).isFile()) files.push(readme);
      } catch {
        // no README in this folder
      }
    }
  }
  return files;
}

const COMMAND_START = /^(?:\$ )?(?:sudo )?(?:homeagentctl|npm run ctl --) (.+)$/;

export function quotedCommands(file: string, text: string): Quoted[] {
  const found: Quoted[] = [];
  const lines = text.split('\n');
  let fenced = false;
  // The text outside fences, with fenced lines blanked so offsets keep their line numbers.
  const prose: string[] = [];
  lines.forEach((line, index) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      prose.push('');
      return;
    }
    if (!fenced) {
      prose.push(line);
      return;
    }
    prose.push('');
    const command = COMMAND_START.exec(line.trim())?.[1];
    if (command === undefined) return;
    const text = endOfCommand(command);
    const refused = /#\s*exits 64\b/.test(command.slice(text.length));
    found.push({ where: `${file}:${index + 1}`, text, inline: false, ...(refused && { refusedOnPurpose: true }) });
  });
  const joined = prose.join('\n');
  for (const match of joined.matchAll(/`([^`]+)`/g)) {
    const span = (match[1] ?? '').replace(/\s*\n\s*/g, ' ').replace(/\\\|/g, '|');
    const command = /^(?:sudo )?homeagentctl (.+)$/.exec(span)?.[1];
    if (command === undefined) continue;
    const line = joined.slice(0, match.index).split('\n').length;
    found.push({ where: `${file}:${line}`, text: command.trim(), inline: true });
  }
  return found;
}

/** A command in a code block ends at a comment or at the two spaces before a table's text (outside quotes). */
function endOfCommand(text: string): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ' ' && (text[i + 1] === ' ' || text[i + 1] === '#')) return text.slice(0, i);
  }
  return text;
}

// ---- from a quoted synopsis to command lines ----

interface Token {
  text: string;
  quoted: boolean;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    if (match[3] !== undefined) tokens.push({ text: match[3], quoted: false });
    else tokens.push({ text: match[1] ?? match[2] ?? '', quoted: true });
  }
  return tokens;
}

/** Splits at ` | ` outside brackets: the alternatives of a synopsis. */
function alternatives(tokens: Token[]): Token[][] {
  const result: Token[][] = [[]];
  let depth = 0;
  for (const token of tokens) {
    if (!token.quoted && token.text === '|' && depth === 0) {
      result.push([]);
      continue;
    }
    result[result.length - 1]?.push(token);
    if (!token.quoted) depth += count(token.text, '[') - count(token.text, ']');
  }
  return result;
}

const count = (text: string, c: string) => text.split(c).length - 1;

/** The alternative as a full command: later ones continue the first's words. */
function withPrefix(first: Token[], alternative: Token[]): Token[] {
  const head = alternative[0];
  if (head === undefined || first === alternative || COMMAND_WORDS.includes(head.text)) return alternative;
  if (head.text.startsWith('-')) {
    const flag = first.findIndex((token) => !token.quoted && /^[-[]/.test(token.text));
    return [...first.slice(0, flag < 0 ? first.length : flag), ...alternative];
  }
  return [...first.slice(0, 1), ...alternative];
}

/** Optional parts left out, and put in. */
function optionalVariants(tokens: Token[]): Token[][] {
  const without: Token[] = [];
  const withAll: Token[] = [];
  let depth = 0;
  for (const token of tokens) {
    if (token.quoted) {
      if (depth === 0) without.push(token);
      withAll.push(token);
      continue;
    }
    const opens = count(token.text, '[');
    const closes = count(token.text, ']');
    const bare = token.text.replace(/[[\]]/g, '');
    if (depth === 0 && opens === 0) without.push(token);
    depth += opens - closes;
    if (bare !== '') withAll.push({ text: bare, quoted: false });
  }
  const same = JSON.stringify(without) === JSON.stringify(withAll);
  return same ? [without] : [without, withAll];
}

class UnknownPlaceholder extends Error {}

function fill(tokens: Token[]): string[] {
  return tokens.map((token, index) => {
    const before = index > 0 ? tokens[index - 1]?.text : undefined;
    let text = token.text.replace(/<[^>]+>/g, (name) => sample(name, before));
    if (token.quoted) return text;
    // `0|1`, `enable|disable`: the first.
    if (text.includes('|')) text = text.split('|')[0] ?? '';
    if (/^[A-Z][A-Z_]*$/.test(text)) return sample(text, before);
    if (text.startsWith('~')) return `sample-dir${text.slice(1)}`;
    return text;
  });
}

function sample(placeholder: string, before: string | undefined): string {
  const value = (before !== undefined ? SAMPLES[`${before} ${placeholder}`] : undefined) ?? SAMPLES[placeholder];
  if (value === undefined) throw new UnknownPlaceholder(`placeholder ${placeholder} has no sample value (add it to SAMPLES)`);
  return value;
}

const elides = (tokens: Token[]) => tokens.some((token) => !token.quoted && /(\.\.\.|…)$/.test(token.text));

/** Every command line a quoted line stands for; a placeholder without a sample throws. */
export function expand(quoted: Quoted): Planned[] {
  const alts = alternatives(tokenize(quoted.text));
  const first = alts[0] ?? [];
  const planned: Planned[] = [];
  for (const alternative of alts) {
    if (elides(alternative)) continue;
    for (const variant of optionalVariants(withPrefix(first, alternative))) {
      const argv = fill(variant);
      if (argv.length > 0) planned.push({ ...quoted, argv });
    }
  }
  return planned;
}

/** Lines read by the parser only (see the header). */
function parseOnly(argv: string[]): boolean {
  if (argv[0] === 'chat') return !argv.includes('-m') && !argv.includes('--message');
  return argv[0] === 'kb' && argv[1] === 'import';
}

// ---- running them ----

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** homeagentctl in this process against `socket`, output collected. */
async function ctlInProcess(socket: string, cwd: string, argv: string[]): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const args = argv.map((arg) => (arg === SOCKET_SAMPLE ? socket : arg));
  // `models` comes first and takes no global flags (it works on <data>/models without the daemon).
  const code = await runHomeagentctl(args[0] === 'models' ? args : ['--socket', socket, ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    cwd,
    env: { HOMEAGENT_DATA_DIR: cwd },
  });
  return { code, stdout, stderr };
}

async function inBatches<T, R>(items: T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await run(items[index] as T);
      }
    }),
  );
  return results;
}

t.test('the synopsis rules expand a quoted line as documented', async (t) => {
  const lines = (text: string) => expand({ where: 'x:1', text, inline: false }).map((p) => p.argv.join(' '));
  t.same(lines('gpio pins | read PIN | write PIN 0|1'), ['gpio pins', 'gpio read hall_button', 'gpio write hall_button 0']);
  t.same(lines('memory forget --entity Alice [--hard --yes] | --event ID'), [
    'memory forget --entity Alice',
    'memory forget --entity Alice --hard --yes',
    'memory forget --event 1',
  ]);
  t.same(lines('kb tree [CATEGORY] [--depth N]'), ['kb tree', 'kb tree notes --depth 2']);
  t.same(lines('config set core.agent.preauthorized_tools \'["cmd_run"]\''), ['config set core.agent.preauthorized_tools ["cmd_run"]']);
  t.same(lines('zigbee [status] | group ...'), ['zigbee', 'zigbee status']);
  t.same(lines('confirm approve K7QX2M | deny K7QX2M'), ['confirm approve K7QX2M', 'confirm deny K7QX2M']);
  t.equal(quotedCommands('g.md', '```\nhomeagentctl frob   # exits 64\n```\n')[0]?.refusedOnPurpose, true, '# exits 64 marks a refusal');
  t.throws(() => lines('frob WIDGET'), { message: /placeholder WIDGET has no sample value/ });
  t.same(
    quotedCommands(
      'f.md',
      'Run `homeagentctl kb\ntoken`.\n```\n$ homeagentctl changes list --limit 10   # newest\nhomeagentctl automations list            every rule\noutput homeagentctl status\n```\n',
    ).map((q) => [q.where, q.text]),
    [
      ['f.md:4', 'changes list --limit 10'],
      ['f.md:5', 'automations list'],
      ['f.md:1', 'kb token'],
    ],
  );
});

t.test('every homeagentctl line quoted in the docs is accepted by homeagentctl', async (t) => {
  const dir = tempDir(t, 'ha-doc-check-');
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, JSON.stringify(CONFIG, null, 2));
  const daemon = await startDaemon(t, { configFile, dataDir: join(dir, 'data') });
  await daemon.waitForReady();
  // The files the lines name, relative to the working directory homeagentctl runs in.
  writeFileSync(join(daemon.dataDir, 'sample.md'), '# Tomato soup\n\nTomatoes, onion, stock.\n');
  writeFileSync(join(daemon.dataDir, 'sample.txt'), 'a sample file\n');
  writeFileSync(join(daemon.dataDir, 'soup.md'), '# Tomato soup\n');
  mkdirSync(join(daemon.dataDir, 'sample-dir', 'notes'), { recursive: true });

  const quoted = markdownFiles().flatMap((file) => quotedCommands(relative(REPO_ROOT, file), readFileSync(file, 'utf8')));
  const planned: Planned[] = [];
  for (const q of quoted) {
    try {
      planned.push(...expand(q));
    } catch (error) {
      t.fail(`${q.where}: homeagentctl ${q.text}: ${(error as Error).message}`);
    }
  }
  t.ok(quoted.length >= 100, `found the quoted lines (${quoted.length}, ${planned.length} command lines)`);

  const refusals: string[] = [];
  const onPurpose = planned.filter((p) => p.refusedOnPurpose === true);
  for (const p of onPurpose) {
    const r = await ctlInProcess(daemon.socketPath, daemon.dataDir, p.argv);
    t.equal(r.code, USAGE_EXIT, `${p.where}: homeagentctl ${p.argv.join(' ')} is refused, as the doc says`);
  }
  t.ok(onPurpose.length > 0, 'the docs show a refusal, and it is seen as one');
  planned.splice(0, planned.length, ...planned.filter((p) => p.refusedOnPurpose !== true));
  const parsedOnly = planned.filter((p) => parseOnly(p.argv));
  for (const p of parsedOnly) {
    try {
      readCommandLine(p.argv, { stdinIsTty: false });
    } catch (error) {
      const message = (error as Error).message;
      if (refuses(p, message)) refusals.push(`${p.where}: homeagentctl ${p.argv.join(' ')}: ${message}`);
    }
  }
  // The same line quoted twice runs once.
  const run = [...new Map(planned.filter((p) => !parseOnly(p.argv)).map((p) => [JSON.stringify(p.argv), p])).values()];
  const ctl = (argv: string[]) => ctlInProcess(daemon.socketPath, daemon.dataDir, argv);
  const results = await inBatches(run, PARALLEL, (p) => ctl(p.argv));
  run.forEach((p, i) => {
    const r = results[i];
    const message = r?.stderr.split('\n')[0] ?? '';
    if (r?.code === USAGE_EXIT && refuses(p, message)) refusals.push(`${p.where}: homeagentctl ${p.argv.join(' ')}: ${message}`);
  });
  t.same(refusals, [], `${run.length} lines run, ${parsedOnly.length} parsed only: none refused`);

  // The detector itself: a refused line is seen as one.
  const wrong = await ctl(['i2c', 'simulate', 'living_room', '--temp', '26.5']);
  t.equal(wrong.code, USAGE_EXIT, 'a mistyped option is a refusal');
  t.match(wrong.stderr, /^homeagentctl: unknown option --temp; i2c takes --temperature, /);
  const binary = await daemon.ctl(['i2c', 'simulate', 'living_room', '--temp', '26.5']);
  t.equal(binary.code, USAGE_EXIT, 'the binary exits 64 for it');
  t.equal(binary.stderr, wrong.stderr, 'with the same words');
  const simulated = await ctl(['i2c', 'simulate', 'living_room', '--temperature', '26.5', '--humidity', '40', '--pressure', '1002']);
  t.equal(simulated.code, 0, `i2c simulate moves the simulated BME280: ${simulated.stderr}`);
  t.match(simulated.stdout, /^living_room: temperature 26\.5 °C, humidity 40 %, pressure 1002 hPa; the next poll reads it/);
  const outOfRange = await ctl(['i2c', 'simulate', 'living_room', '--temperature', '500']);
  t.equal(outOfRange.code, 1, 'a value out of the chip range is the daemon refusing it');
  t.match(outOfRange.stderr, /temperature/);
});
