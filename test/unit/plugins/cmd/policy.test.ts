import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type CmdAllowEntry, type CommandCheck, checkCommand, type ProgramLookup } from '../../../../plugins/cmd/policy.js';
import { systemProgramLookup } from '../../../../plugins/cmd/program-lookup.js';
import { defaultConfig } from '../../../../src/config/loader.js';
import { tempDir } from '../../fixtures/support.js';

/** The default allowlist, read from the configuration schema so the tests follow it. */
const DEFAULT_ALLOW: CmdAllowEntry[] = defaultConfig().plugin.cmd.allow;

/** Every bare name is "installed" as /usr/bin/<name>: argument rules are tested apart from the machine. */
const fakeLookup: ProgramLookup = {
  resolveName: (name) => `/usr/bin/${name}`,
  realExecutable: (path) => (path.startsWith('/usr/bin/') ? path : undefined),
};

function check(argv: unknown, allow: CmdAllowEntry[] = DEFAULT_ALLOW, lookup: ProgramLookup = fakeLookup): CommandCheck {
  return checkCommand(argv, allow, lookup);
}

/** One assert: the argv is refused as a policy denial whose detail says `why`. */
function refused(t: Test, argv: unknown, why: RegExp, allow?: CmdAllowEntry[], lookup?: ProgramLookup): void {
  t.match(
    check(argv, allow, lookup),
    { ok: false, denial: { reason: 'rejected', detail: new RegExp(`^HA_ERR_CMD_DENIED: .*(?:${why.source})`, 's') } },
    `refused: ${JSON.stringify(argv).slice(0, 120)}`,
  );
}

/** One assert: the argv is allowed and runs these arguments. */
function allowed(t: Test, argv: string[], allow?: CmdAllowEntry[], lookup?: ProgramLookup): void {
  const result = check(argv, allow, lookup);
  t.same(result.ok ? result.command.args : result.denial.detail, argv.slice(1), `allowed: ${JSON.stringify(argv).slice(0, 120)}`);
}

t.test('argv shape', async (t) => {
  refused(t, 'ls -l', /must be an array/);
  refused(t, null, /must be an array/);
  refused(t, { 0: 'ls' }, /must be an array/);
  refused(t, [], /empty/);
  refused(t, [42], /argv\[0\] is number/);
  refused(t, ['ls', 42], /argv\[1\] is number/);
  refused(t, ['ls', null], /argv\[1\] is null/);
  refused(t, ['ls', ...Array.from({ length: 128 }, () => 'x')], /at most 128/);
  refused(t, ['ls', 'x'.repeat(4097)], /at most 4096/);
  refused(t, ['ls', 'a\u0000b'], /U\+0000/);
  refused(t, ['ls', 'notes\n-delete'], /U\+000A/);
  refused(t, ['ls', 'tab\there'], /U\+0009/);
  refused(t, ['ls', 'esc\u001b[31m'], /U\+001B/);
  refused(t, ['ls', 'invoice\u202etxt.exe'], /U\+202E/);
  refused(t, ['ls', 'zero\u200bwidth'], /U\+200B/);
  refused(t, ['ls', 'lone\ud800'], /surrogate/);
  allowed(t, ['ls', ...Array.from({ length: 127 }, () => 'x')]);
  allowed(t, ['ls', 'x'.repeat(4096)]);
  allowed(t, ['ls', 'Grüße – 日本.txt']);
});

t.test('program names: only listed names, no shells, no paths in disguise', async (t) => {
  refused(t, ['sh', '-c', 'id'], /not in the cmd allowlist/);
  refused(t, ['bash', '-c', 'id'], /not in the cmd allowlist/);
  refused(t, ['dash'], /not in the cmd allowlist/);
  refused(t, ['env', 'ls'], /not in the cmd allowlist/);
  refused(t, ['xargs', 'rm'], /not in the cmd allowlist/);
  refused(t, ['python3', '-c', 'import os'], /not in the cmd allowlist/);
  refused(t, ['perl', '-e', 'unlink'], /not in the cmd allowlist/);
  refused(t, ['rm', '-rf', '/'], /not in the cmd allowlist/);
  refused(t, ['./ls'], /relative path/);
  refused(t, ['../../bin/sh'], /relative path/);
  refused(t, ['bin/ls'], /relative path/);
  refused(t, ['ls;rm', '-rf', '/'], /not a program name/);
  refused(t, ['ls && rm -rf /'], /not a program name/);
  refused(t, ['ls|sh'], /not a program name/);
  refused(t, ['$(rm -rf /)'], /not a program name/);
  refused(t, ['`id`'], /not a program name/);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax is the point
  refused(t, ['${IFS}ls'], /not a program name/);
  refused(t, ['LS'], /not in the cmd allowlist/);
  refused(t, ['Ls'], /not in the cmd allowlist/);
  refused(t, ['ls '], /not a program name/);
  refused(t, [' ls'], /not a program name/);
  refused(t, ['ls\u0000'], /U\+0000/);
  refused(t, ['ls\n'], /U\+000A/);
  refused(t, ['\u217cs'], /not a program name/); // ⅼ SMALL ROMAN NUMERAL FIFTY
  refused(t, ['l\u0455'], /not a program name/); // ѕ CYRILLIC DZE
  refused(t, ['\uff4c\uff53'], /not a program name/); // ｌｓ fullwidth
  refused(t, ['ls\u200b'], /U\+200B/);
  refused(t, [''], /empty/);
  refused(t, ['..'], /not a program name/);
  refused(t, ['.'], /not a program name/);
  refused(t, ['-ls'], /not a program name/);
  refused(t, ['~/ls'], /relative path/);
  refused(t, ['ls\\'], /not a program name/);
  refused(t, ['*'], /not a program name/);
});

t.test('absolute paths: only a listed path or the same file as a listed name', async (t) => {
  const lookup = systemProgramLookup;
  const dir = tempDir(t);
  symlinkSync('/bin/sh', join(dir, 'ls'));
  symlinkSync(lookup.resolveName('ls') as string, join(dir, 'my-ls'));
  mkdirSync(join(dir, 'sub'));

  refused(t, [join(dir, 'ls')], /not in the cmd allowlist/, DEFAULT_ALLOW, lookup);
  refused(t, ['/bin/sh', '-c', 'id'], /not in the cmd allowlist/, DEFAULT_ALLOW, lookup);
  refused(t, ['/usr/bin/env', 'sh'], /not in the cmd allowlist/, DEFAULT_ALLOW, lookup);
  refused(t, ['/usr/bin/../bin/sh'], /\.\. segments/, DEFAULT_ALLOW, lookup);
  refused(t, ['/usr/bin/./ls'], /\. or \.\. segments/, DEFAULT_ALLOW, lookup);
  refused(t, ['/usr/bin//ls'], /not a plain absolute path/, DEFAULT_ALLOW, lookup);
  refused(t, ['/usr/bin/ls/'], /not a plain absolute path/, DEFAULT_ALLOW, lookup);
  refused(t, ['/usr/bin/ls '], /not a plain absolute path/, DEFAULT_ALLOW, lookup);
  refused(t, [join(dir, 'sub')], /not in the cmd allowlist/, DEFAULT_ALLOW, lookup);
  refused(t, ['/nonexistent/ls'], /not in the cmd allowlist/, DEFAULT_ALLOW, lookup);

  const ls = checkCommand(['/usr/bin/ls', '-l'], DEFAULT_ALLOW, lookup);
  t.match(
    ls,
    { ok: true, command: { executable: lookup.resolveName('ls'), argv0: 'ls', args: ['-l'] } },
    'the same file as ls runs, as ls',
  );
  t.match(checkCommand(['/bin/ls'], DEFAULT_ALLOW, lookup), { ok: true }, '/bin/ls is the same file as ls');
  t.match(checkCommand([join(dir, 'my-ls')], DEFAULT_ALLOW, lookup), { ok: true, command: { argv0: 'ls' } }, 'a link to ls is ls');
  // The rules follow the file, not the name it was called by.
  symlinkSync(lookup.resolveName('sed') as string, join(dir, 'editor'));
  refused(t, [join(dir, 'editor'), '-i', 's/a/b/', 'f'], /sed: "-i" edits files in place/, DEFAULT_ALLOW, lookup);

  const listed = [{ program: '/usr/bin/ls' }];
  t.match(checkCommand(['/usr/bin/ls'], listed, lookup), { ok: true, command: { argv0: '/usr/bin/ls' } }, 'a listed path runs');
  refused(t, ['ls'], /not in the cmd allowlist/, listed, lookup);
  t.match(checkCommand(['/usr/bin/definitely-not-installed'], [{ program: '/usr/bin/definitely-not-installed' }], lookup), {
    ok: false,
    denial: { reason: 'not_found' },
  });
  t.match(checkCommand(['definitely-not-installed'], [{ program: 'definitely-not-installed' }], lookup), {
    ok: false,
    denial: { reason: 'not_found', detail: /not installed in \/usr\/local\/bin, \/usr\/bin, \/bin/ },
  });
});

t.test('names resolve only in the trusted directories', async (t) => {
  const lookup = systemProgramLookup;
  const dir = tempDir(t);
  symlinkSync('/bin/sh', join(dir, 'planted'));
  const cwd = process.cwd();
  const path = process.env.PATH;
  process.chdir(dir);
  process.env.PATH = `${dir}:${path}`;
  try {
    t.equal(lookup.resolveName('planted'), undefined, 'neither the cwd nor $PATH is searched');
  } finally {
    process.chdir(cwd);
    process.env.PATH = path;
  }
  t.match(lookup.resolveName('ls'), /^\/(usr\/)?(local\/)?bin\/ls$/);
});

t.test('programs that run other programs need args patterns', async (t) => {
  refused(t, ['env'], /runs other programs/, [{ program: 'env' }]);
  refused(t, ['xargs', 'echo'], /runs other programs/, [{ program: 'xargs' }]);
  refused(t, ['python3.11', '-V'], /runs other programs/, [{ program: 'python3.11' }]);
  refused(t, ['busybox', 'sh'], /runs other programs/, [{ program: 'busybox' }]);
  const aliased: ProgramLookup = { resolveName: () => '/usr/bin/python3.11', realExecutable: () => undefined };
  refused(t, ['pyver', '-V'], /runs other programs \(python3\.11\)/, [{ program: 'pyver' }], aliased);
  allowed(t, ['env'], [{ program: 'env', args: [] }]);
  refused(t, ['env', 'sh'], /matches none of the args patterns/, [{ program: 'env', args: [] }]);
  // A multi-call binary is what argv[0] names: ls as busybox is ls.
  const busybox: ProgramLookup = { resolveName: () => '/bin/busybox', realExecutable: () => undefined };
  t.match(checkCommand(['ls', '-l'], DEFAULT_ALLOW, busybox), { ok: true, command: { executable: '/bin/busybox', argv0: 'ls' } });
});

t.test('args patterns', async (t) => {
  const allow = [{ program: 'echo', args: ['hello', '[a-z]+'] }];
  allowed(t, ['echo', 'hello', 'world'], allow);
  refused(t, ['echo', 'Hello'], /argument 1 "Hello" matches none/, allow);
  refused(t, ['echo', 'hello world'], /matches none/, allow);
  refused(t, ['echo', 'xhellox'], /matches none/, [{ program: 'echo', args: ['hello'] }]);
  refused(
    t,
    ['echo', 'a|b'],
    /matches none/,
    [{ program: 'echo', args: ['a|b'] }].map((e) => ({ ...e, args: ['a|x'] })),
  );
  refused(t, ['echo', 'x'], /invalid args pattern/, [{ program: 'echo', args: ['('] }]);
  // Patterns never loosen the side-effect rules.
  refused(t, ['sed', '-i', 's/a/b/', 'f'], /in place/, [{ program: 'sed', args: ['.*'] }]);
  // An argument must satisfy one entry entirely; another entry for the same program is another chance.
  allowed(
    t,
    ['echo', 'X'],
    [
      { program: 'echo', args: ['a'] },
      { program: 'echo', args: ['X'] },
    ],
  );
});

t.test('find', async (t) => {
  refused(t, ['find', '.', '-delete'], /"-delete" deletes files/);
  refused(t, ['find', '.', '-name', '*.tmp', '-delete'], /deletes files/);
  refused(t, ['find', '.', '-exec', 'rm', '{}', ';'], /"-exec" runs programs/);
  refused(t, ['find', '.', '-execdir', 'rm', '{}', '+'], /"-execdir" runs programs/);
  refused(t, ['find', '.', '-ok', 'rm', '{}', ';'], /"-ok" runs programs/);
  refused(t, ['find', '.', '-okdir', 'rm', '{}', ';'], /"-okdir" runs programs/);
  refused(t, ['find', '.', '-fprint', '/tmp/out'], /"-fprint" writes files/);
  refused(t, ['find', '.', '-fprint0', '/tmp/out'], /"-fprint0" writes files/);
  refused(t, ['find', '.', '-fprintf', '/tmp/out', '%p'], /"-fprintf" writes files/);
  refused(t, ['find', '.', '-fls', '/tmp/out'], /"-fls" writes files/);
  refused(t, ['find', '--', '-delete'], /deletes files/); // GNU find deletes here: after -- it is an expression
  refused(t, ['find', '-L', '.', '-delete'], /deletes files/);
  refused(t, ['find', '.', '(', '-name', 'x', '-o', '-delete', ')'], /deletes files/);
  refused(t, ['find', '.', '--delete'], /deletes files/);
  allowed(t, ['find', '.', '-name', '*.txt', '-type', 'f', '-printf', '%p\\n']);
  allowed(t, ['find', '.', '-name', 'delete']);
  allowed(t, ['find', '.', '-delete'], [{ program: 'find', allow_flags: ['-delete'] }]);
  refused(t, ['find', '.', '-exec', 'rm', ';'], /runs programs/, [{ program: 'find', allow_flags: ['-delete'] }]);
});

t.test('sed', async (t) => {
  refused(t, ['sed', '-i', 's/a/b/', 'f'], /"-i" edits files in place.*allow_flags/);
  refused(t, ['sed', '-ni', 'p', 'f'], /"-ni" edits files in place/);
  refused(t, ['sed', '-Ei', 's/a/b/', 'f'], /in place/);
  refused(t, ['sed', '-i.bak', 's/a/b/', 'f'], /in place/);
  refused(t, ['sed', '-ie', 's/a/b/', 'f'], /in place/);
  refused(t, ['sed', '--in-place', 's/a/b/', 'f'], /in place/);
  refused(t, ['sed', '--in-place=.bak', 's/a/b/', 'f'], /in place/);
  refused(t, ['sed', '--in-pl', 's/a/b/', 'f'], /in place/);
  refused(t, ['sed', '--i', 's/a/b/', 'f'], /in place/);
  refused(t, ['sed', 's/a/b/', 'f', '-i'], /in place/); // GNU sed reads options after operands
  refused(t, ['sed', '-n', '-s', '-i', 'p', 'f'], /in place/);
  refused(t, ['sed', '-e', 'w /tmp/x', 'f'], /writes files/);
  refused(t, ['sed', '-n', '-e', 'p', '-e', 'W /tmp/x', 'f'], /writes files/);
  refused(t, ['sed', '1e id', 'f'], /runs commands/);
  refused(t, ['sed', 'e', 'f'], /runs commands/);
  refused(t, ['sed', 's/a/b/e', 'f'], /runs commands/);
  refused(t, ['sed', 's/a/id/ge', 'f'], /runs commands/);
  refused(t, ['sed', 's/a/b/w /tmp/x', 'f'], /writes files/);
  refused(t, ['sed', 's|a|b|gw /tmp/x', 'f'], /writes files/);
  refused(t, ['sed', 's/a\\/b/c/w x', 'f'], /writes files/);
  refused(t, ['sed', 's/[/]/x/w x', 'f'], /writes files|could not be checked/);
  refused(t, ['sed', 'y/a/b/;e', 'f'], /runs commands/);
  refused(t, ['sed', '$!{p;w /tmp/x', 'f'], /writes files/);
  refused(t, ['sed', ':a;w x', 'f'], /writes files/);
  refused(t, ['sed', 'b end; w x', 'f'], /writes files/);
  refused(t, ['sed', '/x/I,+3!W out', 'f'], /writes files/);
  refused(t, ['sed', 'r /etc/shadow', 'f'], /reads other files/);
  refused(t, ['sed', '1R /etc/shadow', 'f'], /reads other files/);
  refused(t, ['sed', '-e', 'a foo', '-e', 'e id', 'f'], /runs commands/);
  refused(t, ['sed', '--expression=1e id', 'f'], /runs commands/);
  refused(t, ['sed', '--expr', '1e id', 'f'], /runs commands/);
  refused(t, ['sed', '-e1e id', 'f'], /runs commands/);
  refused(t, ['sed', '-n', '1e id'], /runs commands/);
  refused(t, ['sed', '-f', 'script.sed', 'f'], /"-f" reads the script from a file/);
  refused(t, ['sed', '--file=script.sed', 'f'], /reads the script from a file/);
  refused(t, ['sed', '-nf', 'script.sed', 'f'], /reads the script from a file/);
  refused(t, ['sed', '--frobnicate', 'p', 'f'], /unknown or ambiguous/);
  refused(t, ['sed', '--s', 'p', 'f'], /unknown or ambiguous/); // --silent, --sandbox or --separate
  refused(t, ['sed', 'p;}', 'f'], /could not be checked/);
  refused(t, ['sed', 's/a/b', 'f'], /could not be checked/);
  allowed(t, ['sed', '-n', 'p', 'f']);
  allowed(t, ['sed', '-n', '2,4p', 'notes.txt']);
  allowed(t, ['sed', '-s', '-n', '$p', 'a', 'b']);
  allowed(t, ['sed', '-E', 's/(a|b)+/x/g', 'f']);
  allowed(t, ['sed', '-e', 's/a/b/', '-e', '/x/d', 'f']);
  allowed(t, ['sed', 's/w/e/g;s/x/r/', 'f']);
  allowed(t, ['sed', '-n', '/start/,/end/{/skip/!p}', 'f']);
  allowed(t, ['sed', 'a write this e text', 'f']);
  allowed(t, ['sed', ':a;N;$!ba;s/\\n/ /g', 'f']);
  allowed(t, ['sed', '-n', '--debug', 'p', 'f']);
  allowed(t, ['sed', '-i', 's/a/b/', 'f'], [{ program: 'sed', allow_flags: ['-i'] }]);
  allowed(t, ['sed', '--in-place=.bak', 's/a/b/', 'f'], [{ program: 'sed', allow_flags: ['-i'] }]);
  allowed(t, ['sed', '-n', 'w out', 'f'], [{ program: 'sed', allow_flags: ['w'] }]);
  refused(t, ['sed', '1e id', 'f'], /runs commands/, [{ program: 'sed', allow_flags: ['-i', 'w'] }]);
});

t.test('sort', async (t) => {
  refused(t, ['sort', '-o', '/etc/passwd', 'f'], /"-o" writes the result to a file/);
  refused(t, ['sort', '-uo', 'out', 'f'], /"-uo" writes the result/);
  refused(t, ['sort', '-ofile', 'f'], /writes the result/);
  refused(t, ['sort', '--output=out', 'f'], /writes the result/);
  refused(t, ['sort', '--output', 'out', 'f'], /writes the result/);
  refused(t, ['sort', '--out=x', 'f'], /writes the result/);
  refused(t, ['sort', 'f', '-o', 'f'], /writes the result/);
  refused(t, ['sort', '--compress-program=sh', 'f'], /runs a program/);
  refused(t, ['sort', '--compress-prog', 'sh', 'f'], /runs a program/);
  refused(t, ['sort', '--co=sh', 'f'], /runs a program/);
  refused(t, ['sort', '-k', '-o', 'f'], /writes the result/);
  allowed(t, ['sort', '-u', '-k2,2n', '-t', ',', 'f']);
  allowed(t, ['sort', '-to', 'f']); // -t takes "o" as the separator
  allowed(t, ['sort', '--', '-o']); // an input file named -o
  allowed(t, ['sort', '-o', 'out', 'f'], [{ program: 'sort', allow_flags: ['--output'] }]);
});

t.test('date, hostname, uniq, file', async (t) => {
  refused(t, ['date', '-s', '2020-01-01'], /sets the system clock/);
  refused(t, ['date', '--set=2020-01-01'], /sets the system clock/);
  refused(t, ['date', '--se', '2020-01-01'], /sets the system clock/);
  refused(t, ['date', '-us', '2020-01-01'], /sets the system clock/);
  refused(t, ['date', '010100002020'], /operand "010100002020" sets the system clock/);
  refused(t, ['date', '-u', '--', '0101'], /sets the system clock/);
  refused(t, ['date', '--bogus'], /unknown or ambiguous/);
  allowed(t, ['date', '+%Y-%m-%d']);
  allowed(t, ['date', '-u', '-d', '@0', '+%s']);
  allowed(t, ['date', '-Iseconds']);

  refused(t, ['hostname', 'evil'], /sets the host name/);
  refused(t, ['hostname', '-s', 'evil'], /sets the host name/);
  refused(t, ['hostname', '-F', '/tmp/name'], /"-F" sets the host name/);
  refused(t, ['hostname', '--file=/tmp/name'], /from a file/);
  refused(t, ['hostname', '--fi', '/tmp/name'], /from a file/);
  refused(t, ['hostname', '-sF', '/tmp/name'], /from a file/);
  refused(t, ['hostname', '-b'], /sets a default host name/);
  refused(t, ['domainname', 'evil'], /sets the host name/, [{ program: 'domainname' }]);
  allowed(t, ['hostname']);
  allowed(t, ['hostname', '-s']);
  allowed(t, ['hostname', '--all-ip-addresses']);

  refused(t, ['uniq', 'in', 'out'], /"out" is an output file/);
  refused(t, ['uniq', '-c', '-', 'out'], /output file/);
  refused(t, ['uniq', '--', 'in', 'out'], /output file/);
  refused(t, ['uniq', 'in', '-c', 'out'], /output file/);
  allowed(t, ['uniq', '-c', '-f', '2', 'in']);
  allowed(t, ['uniq', '--skip-fields', '2', 'in']);
  allowed(t, ['uniq', 'in', 'out'], [{ program: 'uniq', allow_flags: ['output-file'] }]);

  refused(t, ['file', '-C', '-m', 'magic'], /"-C" writes a compiled magic file/);
  refused(t, ['file', '--compile'], /compiled magic file/);
  refused(t, ['file', '-bC'], /compiled magic file/);
  refused(t, ['file', '-S', 'x'], /seccomp sandbox/);
  allowed(t, ['file', '-b', '--mime-type', 'x']);
  allowed(t, ['file', '-m', '-C', 'x'], [{ program: 'file', allow_flags: ['-C'] }]);
});

t.test('ps', async (t) => {
  refused(t, ['ps', 'e'], /shows the environment of processes/);
  refused(t, ['ps', 'auxe'], /environment/);
  refused(t, ['ps', 'axeww'], /environment/);
  allowed(t, ['ps', '-ef']);
  allowed(t, ['ps', '-eo', 'pid,user,comm']);
  allowed(t, ['ps', 'aux']);
  // BSD words carry values: ewwp1234 is e, w, w, and p with the pid list 1234.
  refused(t, ['ps', 'ewwp1234'], /"ewwp1234" shows the environment/);
  refused(t, ['ps', 'p1234e'], /environment/);
  refused(t, ['ps', '-p', '1', 'e'], /environment/);
  refused(t, ['ps', 'o', 'user'], /environment/, undefined);
  allowed(t, ['ps', '-o', 'user,pid']);
  allowed(t, ['ps', '-eo', 'user']);
  allowed(t, ['ps', '--sort', 'start_time']);
  allowed(t, ['ps', '--format=user', 'p1234']);
  allowed(t, ['ps', 'ewwp1234'], [{ program: 'ps', allow_flags: ['e'] }]);
});

t.test('ordinary commands pass', async (t) => {
  allowed(t, ['ls', '-la', '--color=never', '.']);
  allowed(t, ['grep', '-rn', '--include=*.ts', 'TODO', '.']);
  allowed(t, ['cat', '-n', 'notes.txt']);
  allowed(t, ['echo', '$(rm -rf /)', '; rm', '|', '`id`']);
  allowed(t, ['df', '-h']);
  allowed(t, ['ps', 'aux']);
  allowed(t, ['ping', '-c', '1', '127.0.0.1']);
});

t.test("paths to process environments and the daemon's databases are refused for every program", async (t) => {
  refused(t, ['cat', '/proc/1234/environ'], /process memory, environments/);
  refused(t, ['cat', '/proc/self/environ'], /process memory, environments/);
  refused(t, ['head', '-c', '100', '/proc/99/task/100/mem'], /process memory, environments/);
  refused(t, ['ls', '-l', '/proc/1/fd'], /process memory, environments/);
  refused(t, ['cat', '/var/lib/homeagent/state.db'], /databases/);
  refused(t, ['grep', 'api_key', 'state.db-wal'], /databases/);
  allowed(t, ['cat', '/proc/uptime']);
  allowed(t, ['cat', '/proc/1/status']);
  allowed(t, ['ls', 'state.dbx']);
});
