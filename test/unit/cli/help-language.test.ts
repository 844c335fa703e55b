// homeagentctl's and homeagent's help and usage errors in the terminal's language: the whole help
// and every refusal of a command line in Chinese under a zh locale, in English under LANG=C, the
// synopses (what one types) the same in both, the second column aligned by terminal columns, and
// --json the same whatever the locale. homeagentctl runs in this process (runHomeagentctl with the
// locale in io.env); homeagent from its TypeScript source with this test's loader.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import t from 'tap';
import { ALL_USAGE_LINES, COMMAND_WORDS, commandUsage, helpText } from '../../../src/cli/command-line.js';
import { formatUsage } from '../../../src/cli/command-module.js';
import { displayWidth } from '../../../src/cli/format.js';
import { runModels } from '../../../src/cli/models.js';
import { runHomeagentctl } from '../../../src/cli/run-homeagentctl.js';
import { cleanEnv, nodeCommand, REPO_ROOT } from '../../helpers/daemon.js';
import { tempDir } from '../fixtures/support.js';

const CHINESE = { LANG: 'zh_CN.UTF-8' };
const ENGLISH = { LANG: 'C' };
/** A CJK character (ideographs and full-width punctuation): Chinese text has some, English none. */
const CJK = /[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]/;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** homeagentctl in this process with `locale` as its environment (no LC_* from the test's own). */
async function ctl(argv: string[], locale: NodeJS.ProcessEnv, cwd: string): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const code = await runHomeagentctl(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    cwd,
    env: { HOMEAGENT_SOCKET: join(cwd, 'none.sock'), HOMEAGENT_DATA_DIR: cwd, ...locale },
  });
  return { code, stdout, stderr };
}

t.test('every help line has its Chinese text, and the help prints it under a zh locale', async (t) => {
  t.ok(ALL_USAGE_LINES.length > 60, `${ALL_USAGE_LINES.length} lines walked`);
  for (const line of ALL_USAGE_LINES) {
    t.ok(CJK.test(line.zh), `${line.synopsis}: Chinese text`);
    t.notOk(CJK.test(line.about), `${line.synopsis}: English text without Chinese`);
    t.notOk(CJK.test(line.synopsis), `${line.synopsis}: the synopsis is what one types`);
  }
  const zh = helpText('zh');
  const en = helpText('en');
  for (const line of ALL_USAGE_LINES) {
    t.ok(zh.includes(`  ${line.synopsis}`) && en.includes(`  ${line.synopsis}`), `${line.synopsis} in both helps`);
    for (const text of line.zh.split('\n')) t.ok(zh.includes(text), `${line.synopsis}: its Chinese text in the Chinese help`);
  }
  t.ok(zh.startsWith('用法：homeagentctl [--socket PATH] [--json] [--timeout MS] <command>\n'), 'the synopsis after 用法');
  t.ok(en.startsWith('usage: homeagentctl [--socket PATH] [--json] [--timeout MS] <command>\n'));
  t.notOk(CJK.test(en), 'no Chinese in the English help');
  t.match(zh, /套接字由 --socket 或 \$HOMEAGENT_SOCKET 指定/, 'where the socket is, in Chinese');
  for (const word of COMMAND_WORDS) t.ok(zh.includes(commandUsage(word, 'zh') ?? '\0'), `${word}'s Chinese lines in the Chinese help`);
});

t.test('homeagentctl --help and help follow the terminal, LC_ALL first', async (t) => {
  const cwd = tempDir(t);
  const runs = await Promise.all([
    ctl(['--help'], CHINESE, cwd),
    ctl(['help'], CHINESE, cwd),
    ctl([], CHINESE, cwd),
    ctl(['--help'], ENGLISH, cwd),
    ctl(['help'], { LC_ALL: 'zh_TW.UTF-8', LANG: 'C' }, cwd),
    ctl(['--help'], { LC_ALL: 'C', LANG: 'zh_CN.UTF-8' }, cwd),
    ctl(['-h'], {}, cwd),
  ]);
  const [helpZh, wordZh, bareZh, helpEn, lcAllZh, lcAllC, none] = runs as [Ran, Ran, Ran, Ran, Ran, Ran, Ran];
  for (const r of runs) t.equal(r.code, 0);
  t.equal(helpZh.stdout, `${helpText('zh')}\n`, '--help in Chinese');
  t.equal(wordZh.stdout, helpZh.stdout, 'help in Chinese');
  t.equal(bareZh.stdout, helpZh.stdout, 'no command: the help, in Chinese');
  t.equal(lcAllZh.stdout, helpZh.stdout, 'LC_ALL=zh_TW beats LANG=C');
  t.equal(helpEn.stdout, `${helpText('en')}\n`, '--help in English under LANG=C');
  t.equal(lcAllC.stdout, helpEn.stdout, 'LC_ALL=C beats LANG=zh_CN');
  t.equal(none.stdout, helpEn.stdout, 'no locale: English');
  t.equal(helpZh.stdout.split('\n').length, helpEn.stdout.split('\n').length, 'the same lines in both languages');
});

t.test('the second column starts in the same terminal column in both languages', async (t) => {
  for (const language of ['en', 'zh'] as const) {
    const lines = formatUsage([{ usage: ALL_USAGE_LINES }], language).split('\n');
    for (const line of lines) {
      if (line.startsWith(' '.repeat(28))) {
        t.notOk(line.slice(28).startsWith(' '), `${language}: a continuation line's text at column 28`);
        continue;
      }
      // A synopsis beside its text: the text starts after the padding, at terminal column 28.
      // The longest synopsis the line starts with ('status --memory', not 'status').
      const synopsis = ALL_USAGE_LINES.filter((u) => line.startsWith(`  ${u.synopsis} `) && line.length > u.synopsis.length + 3).sort(
        (a, b) => b.synopsis.length - a.synopsis.length,
      )[0];
      if (synopsis === undefined) continue;
      const text = line.slice(2 + synopsis.synopsis.length).trimStart();
      t.equal(displayWidth(line) - displayWidth(text), 28, `${language}: ${synopsis.synopsis}`);
    }
  }
  // A wide synopsis (display width 13, 10 characters) is padded by its columns, not its length.
  const usage = [
    { synopsis: 'lists 购物清单', about: 'the list', zh: '清单' },
    { synopsis: 'gpio read PIN', about: 'one pin', zh: '一个引脚' },
    { synopsis: 'changes rollback|commit ID', about: 'undo,\nor keep', zh: '回滚，\n或保留' },
  ];
  t.equal(
    formatUsage([{ usage }], 'zh'),
    [
      `  lists 购物清单${' '.repeat(12)}清单`,
      '  gpio read PIN             一个引脚',
      '  changes rollback|commit ID',
      '                            回滚，',
      '                            或保留',
    ].join('\n'),
  );
  t.equal(displayWidth(formatUsage([{ usage: usage.slice(0, 1) }], 'zh').replace(/清单$/, '')), 28, 'padded to 28 columns');
  t.equal(formatUsage([{ usage }], 'en').split('\n')[1], '  gpio read PIN             one pin', 'English from the same lines');
});

t.test('a usage error is in the terminal language: the problem, the command lines, where the help is', async (t) => {
  const cwd = tempDir(t);
  const [missingZh, missingEn, unknownZh, unknownEn, optionZh, flagZh, timeoutZh, valueZh] = await Promise.all([
    ctl(['config'], CHINESE, cwd),
    ctl(['config'], ENGLISH, cwd),
    ctl(['frobnicate'], CHINESE, cwd),
    ctl(['frobnicate'], ENGLISH, cwd),
    ctl(['status', '--bogus'], CHINESE, cwd),
    ctl(['gpio', 'pins', '--qos', '1'], CHINESE, cwd),
    ctl(['status', '--timeout=-5'], CHINESE, cwd),
    ctl(['status', '--socket'], CHINESE, cwd),
  ]);
  for (const r of [missingZh, missingEn, unknownZh, unknownEn, optionZh, flagZh, timeoutZh, valueZh]) {
    t.equal(r?.code, 64);
    t.equal(r?.stdout, '', 'nothing on stdout');
  }
  t.equal(
    missingZh?.stderr,
    `homeagentctl: config 需要一个子命令：list、get、set、reset 或 history\n\n用法：\n${commandUsage('config', 'zh')}\n\n全部命令见 homeagentctl --help\n`,
    'a missing argument, in Chinese with the Chinese config lines',
  );
  t.equal(
    missingEn?.stderr,
    `homeagentctl: config needs a command: list, get, set, reset or history\n\nusage:\n${commandUsage('config', 'en')}\n\nsee homeagentctl --help for every command\n`,
    'the same in English',
  );
  t.equal(
    unknownZh?.stderr,
    `homeagentctl: 未知命令 frobnicate\n命令：${COMMAND_WORDS.join(', ')}\n\n全部命令见 homeagentctl --help\n`,
    'an unknown command, in Chinese',
  );
  t.match(unknownEn?.stderr, /^homeagentctl: unknown command frobnicate\ncommands: status, /);
  t.match(
    optionZh?.stderr,
    /^homeagentctl: 未知选项 --bogus；status 只接受 --socket, --json, --timeout\n\n用法：\n {2}status {20}守护进程在做什么/,
  );
  t.match(flagZh?.stderr, /^homeagentctl: --qos 是 mqtt 的选项\n/);
  t.match(timeoutZh?.stderr, /^homeagentctl: --timeout 须为正数（毫秒）\n/);
  t.match(valueZh?.stderr, /^homeagentctl: --socket 需要一个值\n/);
  const dash = await ctl(['status', '--timeout', '-5'], CHINESE, cwd);
  t.match(dash.stderr, /^homeagentctl: --timeout 的值以 - 开头，请写成 --timeout=-…\n/, 'a value that starts with a dash');
  for (const r of [missingZh, unknownZh, optionZh]) t.notOk(/usage|see homeagentctl/.test(r?.stderr ?? ''), 'no English frame');
  for (const r of [missingEn, unknownEn]) t.notOk(CJK.test(r?.stderr ?? ''), 'no Chinese under LANG=C');
});

t.test("every command's own refusal is in Chinese under a zh locale, and in English under LANG=C", async (t) => {
  const cwd = tempDir(t);
  // `version` reads no arguments; every other command word refuses these.
  const words = COMMAND_WORDS.filter((word) => word !== 'version');
  const bad = (word: string) => [word, 'no-such-command', 'x', 'y', 'z'];
  const zh = await Promise.all(words.map((word) => ctl(bad(word), CHINESE, cwd)));
  const en = await Promise.all(words.map((word) => ctl(bad(word), ENGLISH, cwd)));
  words.forEach((word, i) => {
    const [problemZh = ''] = zh[i]?.stderr.split('\n') ?? [];
    const [problemEn = ''] = en[i]?.stderr.split('\n') ?? [];
    t.equal(zh[i]?.code, 64, `${word}: refused`);
    t.ok(CJK.test(problemZh), `${word}: ${problemZh}`);
    t.notOk(CJK.test(problemEn), `${word}: ${problemEn}`);
    t.ok(problemZh.startsWith('homeagentctl: ') && problemEn.startsWith('homeagentctl: '), `${word}: named`);
  });
});

t.test('--json is the same under either locale', async (t) => {
  const cwd = tempDir(t);
  const [statusZh, statusEn, modelsZh, modelsEn] = await Promise.all([
    ctl(['--json', 'status'], CHINESE, cwd),
    ctl(['--json', 'status'], ENGLISH, cwd),
    ctl(['models', 'list', '--json'], CHINESE, cwd),
    ctl(['models', 'list', '--json'], ENGLISH, cwd),
  ]);
  t.equal(statusZh?.code, 69, 'no daemon');
  t.equal(statusZh?.code, statusEn?.code);
  t.match(statusZh?.stdout, /^\{"ok":false,"error":\{"code":"HA_ERR_DAEMON_NOT_RUNNING"/);
  t.equal(statusZh?.stdout, statusEn?.stdout, 'the same JSON');
  t.equal(modelsZh?.code, 0);
  t.equal(modelsZh?.stdout, modelsEn?.stdout, 'models list --json the same');
});

t.test('homeagentctl models --help and its usage errors in the terminal language', async (t) => {
  const cwd = tempDir(t);
  const run = async (argv: string[], env: NodeJS.ProcessEnv) => {
    let stdout = '';
    let stderr = '';
    const code = await runModels(argv, {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      env,
      cwd,
    });
    return { code, stdout, stderr };
  };
  const helpZh = await run(['--help'], CHINESE);
  t.equal(helpZh.code, 0);
  t.match(helpZh.stdout, /^用法：homeagentctl models list \[--data-dir DIR\] \[--json\]\n {7}homeagentctl models install <DIR\|FILE\|URL>/);
  t.match(helpZh.stdout, /\n {2}list {6}已安装的模型/);
  const helpEn = await run(['--help'], ENGLISH);
  t.match(helpEn.stdout, /^usage: homeagentctl models list/);
  t.notOk(CJK.test(helpEn.stdout));
  t.ok(helpZh.stdout.split('\n').length <= helpEn.stdout.split('\n').length, 'the Chinese help is no longer than the English');
  const missing = await run([], CHINESE);
  t.equal(missing.code, 64);
  t.match(missing.stderr, /^homeagentctl: models 需要一个子命令：list 或 install\n\n用法：homeagentctl models list/);
  const stray = await run(['list', '--sha256', 'x'], CHINESE);
  t.match(stray.stderr, /^homeagentctl: --sha256 是 models install 的选项\n/);
  const english = await run(['frob'], ENGLISH);
  t.match(english.stderr, /^homeagentctl: unknown models command frob; use list or install\n\nusage: /);
});

/** homeagent from its source with `locale` (and nothing of the test's own locale). */
function runHomeagent(args: string[], locale: NodeJS.ProcessEnv): Promise<Ran> {
  const env = cleanEnv({ LANG: undefined, LC_ALL: undefined, LC_MESSAGES: undefined, ...locale });
  const loader = process.execArgv.filter((arg) => /swc-register/.test(arg));
  const command = nodeCommand([...loader, join(REPO_ROOT, 'src', 'main.ts'), ...args], env);
  return new Promise((resolve) => {
    execFile(command.command, command.args, { cwd: REPO_ROOT, env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

t.test('homeagent help and its usage errors in the terminal language', async (t) => {
  const [helpZh, helpEn, unknownZh, unknownEn, restoreZh] = await Promise.all([
    runHomeagent(['help'], CHINESE),
    runHomeagent(['--help'], ENGLISH),
    runHomeagent(['frobnicate'], CHINESE),
    runHomeagent(['frobnicate'], ENGLISH),
    runHomeagent(['restore'], CHINESE),
  ]);
  t.equal(helpZh.code, 0);
  t.match(helpZh.stdout, /^用法：homeagent <command>\n\n {2}run \[--config FILE\] {11}运行守护进程/);
  t.match(helpZh.stdout, /\n {2}restore FILE \[--db NAME\] \[--config FILE\]\n {32}用备份替换一个数据库（默认 state/);
  t.match(helpZh.stdout, /\n {2}help {26}显示本说明\n$/);
  t.equal(helpEn.code, 0);
  t.match(helpEn.stdout, /^usage: homeagent <command>\n\n {2}run \[--config FILE\] {11}run the daemon/);
  t.notOk(CJK.test(helpEn.stdout), 'no Chinese under LANG=C');
  t.equal(helpZh.stdout.split('\n').length, helpEn.stdout.split('\n').length, 'the same lines');
  t.equal(unknownZh.code, 64);
  t.match(unknownZh.stderr, /^homeagent: 未知命令 frobnicate\n用法：homeagent <command>\n/);
  t.equal(unknownEn.code, 64);
  t.match(unknownEn.stderr, /^homeagent: unknown command frobnicate\nusage: homeagent <command>\n/);
  t.equal(restoreZh.code, 64);
  t.match(restoreZh.stderr, /^homeagent: restore 需要恰好一个备份文件\n/);
});
