// The catalogue of homeagentctl's command modules (src/cli/commands.ts) and what homeagentctl
// derives from it: the help lines, and the refusal of one command's flag given with another. The
// command line runs from its TypeScript source with this test's loader, so it needs no build.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { COMMAND_WORDS, commandUsage, helpText } from '../../../src/cli/command-line.js';
import { formatUsage } from '../../../src/cli/command-module.js';
import { AGENT_COMMANDS, ALL_COMMANDS, DAEMON_COMMANDS, HOME_COMMANDS } from '../../../src/cli/commands.js';
import { cleanEnv, nodeCommand, REPO_ROOT } from '../../helpers/daemon.js';
import { tempDir } from '../fixtures/support.js';

const CTL_TS = join(REPO_ROOT, 'src', 'cli', 'homeagentctl.ts');
const LOADER = process.execArgv.filter((arg) => /swc-register/.test(arg));

interface CtlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** homeagentctl from source in an English terminal (LANG=C), whatever the locale the tests run under. */
function runCtlSource(socket: string, args: string[]): Promise<CtlResult> {
  const env = cleanEnv({ HOMEAGENT_SOCKET: socket, LANG: 'C', LC_ALL: undefined, LC_MESSAGES: undefined });
  const command = nodeCommand([...LOADER, CTL_TS, ...args], env);
  return new Promise((resolve) => {
    execFile(command.command, command.args, { cwd: REPO_ROOT, env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

t.test('every command is catalogued once, and commands that share a flag declare it alike', async (t) => {
  const names = ALL_COMMANDS.map((c) => c.name);
  t.same([...new Set(names)], names, 'no name twice');
  t.equal(ALL_COMMANDS.length, DAEMON_COMMANDS.length + HOME_COMMANDS.length + AGENT_COMMANDS.length);
  const declared = new Map<string, string>();
  for (const command of ALL_COMMANDS) {
    t.ok(command.usage.length > 0, `${command.name} has help lines`);
    for (const [flag, definition] of Object.entries(command.options)) {
      const first = declared.get(flag);
      if (first === undefined) declared.set(flag, JSON.stringify(definition));
      else t.equal(JSON.stringify(definition), first, `--${flag} of ${command.name}`);
    }
  }
  t.ok(declared.has('reset') && declared.has('limit'), 'the shared flags were compared');
});

t.test('formatUsage puts a short synopsis beside its text and a long one above it', async (t) => {
  const usage = [
    { synopsis: 'gpio read PIN', about: 'one pin', zh: '一个引脚' },
    { synopsis: 'confirm approve|deny CODE', about: 'run one, or drop it', zh: '执行或丢弃' },
    { synopsis: 'changes rollback|commit ID', about: 'undo a change set,\nor keep one', zh: '回滚变更集，\n或保留' },
  ];
  t.equal(
    formatUsage([{ usage }], 'en'),
    [
      '  gpio read PIN             one pin',
      '  confirm approve|deny CODE run one, or drop it',
      '  changes rollback|commit ID',
      '                            undo a change set,',
      '                            or keep one',
    ].join('\n'),
  );
});

t.test('homeagentctl refuses a flag of one command given with another, naming its owners (exit 64)', async (t) => {
  const socket = join(tempDir(t), 'none.sock');
  const cases: Array<[string[], RegExp]> = [
    [['gpio', 'pins', '--qos', '1'], /^homeagentctl: --qos belongs to mqtt\n/],
    [['voice', '--reset', 'password'], /^homeagentctl: --reset belongs to mqtt or webui\n/],
    [['lists', '--press', '100'], /^homeagentctl: --press belongs to gpio\n/],
    [['confirm', '--force'], /^homeagentctl: --force belongs to zigbee\n/],
    [['i2c', '--area', 'kitchen'], /^homeagentctl: --area belongs to entities or sensors\n/],
    [['status', '--list', 'shopping'], /^homeagentctl: --list belongs to lists\n/],
  ];
  const results = await Promise.all(cases.map(([args]) => runCtlSource(socket, args)));
  cases.forEach(([args, message], i) => {
    const r = results[i];
    t.equal(r?.code, 64, args.join(' '));
    t.match(r?.stderr, message, args.join(' '));
  });
});

t.test('homeagentctl takes a flag with its own command, and its help holds every catalogued one in place', async (t) => {
  const socket = join(tempDir(t), 'none.sock');
  const [own, help] = await Promise.all([runCtlSource(socket, ['sensors', '--area', 'kitchen']), runCtlSource(socket, ['--help'])]);
  t.equal(own.code, 69, 'past the flag checks, to the daemon (not running)');
  t.match(own.stderr, /HA_ERR_DAEMON_NOT_RUNNING/);
  t.equal(help.code, 0);
  const text = help.stdout;
  const follows = (anchor: string, block: string, what: string) => t.ok(text.includes(`${anchor}\n${block}\n`), what);
  follows(
    '                            plugin change on trial (exit 1 when something failed, 0 when only degraded)',
    formatUsage(DAEMON_COMMANDS, 'en'),
    'changes after health',
  );
  follows(
    "  kb token                  the kbtree service's token and address",
    formatUsage(HOME_COMMANDS, 'en'),
    'the home commands after kb',
  );
  follows('                            otherwise a conversation on the terminal', formatUsage(AGENT_COMMANDS, 'en'), 'confirm after chat');
});

t.test('a usage error shows the problem, only its command lines and where the help is; --help stays whole', async (t) => {
  const socket = join(tempDir(t), 'none.sock');
  const cases: Array<{ args: string[]; message: RegExp; usage?: string; commands?: boolean }> = [
    {
      args: ['i2c', 'simulate', 'living_room', '--temp', '26.5'],
      message:
        /^homeagentctl: unknown option --temp; i2c takes --temperature, --humidity, --pressure, --illuminance, --offline, --online \(and --socket, --json, --timeout\)\n/,
      usage: 'i2c',
    },
    {
      args: ['config', 'bogus'],
      message: /^homeagentctl: unknown config command bogus; use list, get, set, reset or history\n/,
      usage: 'config',
    },
    { args: ['gpio'], message: /^homeagentctl: gpio needs a command: pins, read, write or simulate\n/, usage: 'gpio' },
    { args: ['memory', 'search'], message: /^homeagentctl: memory search needs/, usage: 'memory' },
    { args: ['frobnicate'], message: /^homeagentctl: unknown command frobnicate\n/, commands: true },
    { args: ['--bogus'], message: /^homeagentctl: unknown option --bogus; every command takes --socket, --json, --timeout\n/ },
    { args: ['status', '--bogus'], message: /^homeagentctl: unknown option --bogus; status takes no options of its own/, usage: 'status' },
  ];
  const [help, ...results] = await Promise.all([runCtlSource(socket, ['--help']), ...cases.map((c) => runCtlSource(socket, c.args))]);
  t.equal(help?.code, 0);
  t.equal(help?.stdout.trimEnd().split('\n').length, helpText('en').split('\n').length, '--help prints every line');
  cases.forEach((c, i) => {
    const r = results[i] as CtlResult;
    const what = c.args.join(' ');
    t.equal(r.code, 64, `${what}: exit 64`);
    t.match(r.stderr, c.message, what);
    t.ok(r.stderr.trimEnd().endsWith('\nsee homeagentctl --help for every command'), `${what}: points at --help`);
    t.notOk(r.stderr.includes('The socket is --socket'), `${what}: not the whole help`);
    const usage = c.usage === undefined ? undefined : commandUsage(c.usage, 'en');
    if (usage !== undefined) {
      t.ok(r.stderr.includes(`\nusage:\n${usage}\n`), `${what}: the ${c.usage} lines`);
      t.ok(r.stderr.split('\n').length < 20, `${what}: short`);
    } else t.notOk(r.stderr.includes('usage:'), `${what}: no command's lines`);
    t.equal(
      r.stderr.includes(`commands: ${COMMAND_WORDS.join(', ')}`),
      c.commands === true,
      `${what}: the command list only for an unknown command`,
    );
  });
});

t.test('every command word has its help lines, and the help holds each of them', async (t) => {
  for (const language of ['en', 'zh'] as const) {
    const help = helpText(language);
    for (const word of COMMAND_WORDS) {
      const usage = commandUsage(word, language);
      t.ok(usage, `${word} has lines (${language})`);
      t.ok(help.includes(usage ?? '\0'), `${word}'s lines are in --help (${language})`);
    }
    t.equal(commandUsage('frobnicate', language), undefined);
  }
  t.same([...new Set(COMMAND_WORDS)], COMMAND_WORDS, 'no word twice');
});
