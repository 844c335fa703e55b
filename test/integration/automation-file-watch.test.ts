/**
 * Editing the automations in the configuration file takes effect without a restart
 * (src/automation/automation-file-watch.ts): a real file on disk, a daemon built in-process, the
 * file saved the ways editors save it (rewritten in place; written beside and renamed over it).
 * A good edit swaps the rules; a broken one (YAML syntax, a rule the schema refuses) keeps the
 * running rules, is logged with the file's line and the key, and stays a daemon notice until an
 * edit that loads clears it. `homeagentctl config get` then says the rules come from the file.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { type LogLine, tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { until } from '../helpers/until.js';

const WAIT_MS = 15_000;

function rule(id: string, edge = 'rising'): string[] {
  return [
    `      - id: ${id}`,
    '        triggers:',
    `          - { type: edge, pin: ${id}_button, edge: ${edge} }`,
    '        actions:',
    '          - { type: notify, channel: mqtt, text: pressed }',
  ];
}

function configText(rules: string[][]): string {
  return ['# automations follow this file', 'core:', '  automations:', '    watch_debounce_ms: 50', '    rules:', ...rules.flat(), ''].join(
    '\n',
  );
}

t.test('edits of the file: a good one swaps the rules, a broken one keeps them and says where', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'config.yaml');
  writeFileSync(file, configText([rule('hall')]));
  const daemon = await startDaemon(t, { configFile: file, dataDir: join(dir, 'data') });
  await daemon.waitForReady();
  t.ok(
    daemon.logs.some((l) => l.msg === 'automation rules follow the configuration file'),
    'the daemon says it follows the file',
  );

  const ids = async () => {
    const listed = await daemon.ctl(['--json', 'automations', 'list']);
    return (listed.json() as { automations: Array<{ id: string }> }).automations.map((a) => a.id).sort();
  };
  const notices = async () => {
    const status = await daemon.ctl(['--json', 'status']);
    return (status.json() as { notices: Array<{ key: string; level: string; message: string }> }).notices.filter(
      (n) => n.key === 'automation.config_file',
    );
  };
  let seen = daemon.logs.length;
  /** The next log line (after the last edit) matching `predicate`. */
  const next = async (predicate: (line: LogLine) => boolean) => {
    const from = seen;
    const line = await daemon.waitForLog((l) => daemon.logs.indexOf(l) >= from && predicate(l), WAIT_MS);
    seen = daemon.logs.length;
    return line;
  };
  t.same(await ids(), ['hall']);

  await t.test('written beside the file and renamed over it (vim, most editors): the new rule runs', async (t) => {
    const temporary = join(dir, '.config.yaml.swp');
    writeFileSync(temporary, configText([rule('hall'), rule('porch')]));
    renameSync(temporary, file);
    const line = await next((l) => l.msg?.includes('automation rules changed') === true);
    t.match(line.msg, /config\.yaml read again: automation rules changed/);
    await daemon.waitForLog((l) => l.msg === 'automations reloaded', WAIT_MS);
    t.same(await ids(), ['hall', 'porch'], 'both rules run');
    const got = await daemon.ctl(['--json', 'config', 'get', 'core.automations.rules']);
    t.equal((got.json() as { source: string }).source, file, 'the rules come from the file');
  });

  await t.test('a YAML syntax error: the running rules stay, the line is named, a notice stays', async (t) => {
    writeFileSync(file, `${configText([rule('hall')])}      - id: [broken\n`);
    const line = await next((l) => l.json?.level === 'error');
    t.match(line.msg, /config\.yaml not reloaded, the running automations stay: .*line \d+/, line.text);
    t.same(await ids(), ['hall', 'porch'], 'nothing changed');
    const [notice] = await notices();
    t.equal(notice?.level, 'warning', 'a warning notice: the house still runs');
    t.match(notice?.message, /config\.yaml not reloaded/);
  });

  await t.test('a rule the schema refuses: the file, its line and the key with the allowed values', async (t) => {
    // Line 13 holds the second rule's trigger (a header of 5 lines, 5 lines per rule).
    writeFileSync(file, configText([rule('hall'), rule('porch', 'up')]));
    const line = await next((l) => l.json?.level === 'error');
    t.equal(
      line.msg,
      `${file}:13: core.automations.rules[1].triggers[0].edge: expected one of rising, falling, both, found "up"; not reloaded, the running automations stay`,
    );
    t.equal(line.json?.line, 13);
    t.same(await ids(), ['hall', 'porch'], 'nothing changed');
    t.match((await notices())[0]?.message, /:13: core\.automations\.rules\[1\]\.triggers\[0\]\.edge/);
  });

  await t.test('a good edit in place after the broken ones: swapped, the notice is gone', async (t) => {
    writeFileSync(file, configText([rule('garage')]));
    await next((l) => l.msg?.includes('automation rules changed') === true);
    await until('the rules to be swapped', async () => ((await ids()).join() === 'garage' ? true : undefined), WAIT_MS);
    t.same(await ids(), ['garage'], 'hall and porch stopped, garage runs');
    t.same(await notices(), [], 'the notice is cleared');
  });

  await t.test('a runtime change wins over the file until it is reset', async (t) => {
    const set = await daemon.ctl(['config', 'set', 'core.automations.rules', '[]']);
    t.equal(set.code, 0, set.stderr);
    await until('no rules', async () => ((await ids()).length === 0 ? true : undefined), WAIT_MS);
    writeFileSync(file, configText([rule('garage'), rule('shed')]));
    const line = await next((l) => l.json?.level === 'warn');
    t.match(line.msg, /changed in .*config\.yaml, but a value from the environment or `homeagentctl config set` wins/);
    t.same(await ids(), [], 'the runtime value still runs');
    const reset = await daemon.ctl(['config', 'reset', 'core.automations.rules']);
    t.equal(reset.code, 0, reset.stderr);
    await until('the file rules', async () => ((await ids()).join() === 'garage,shed' ? true : undefined), WAIT_MS);
    t.pass('config reset falls back to the file as it is now');
  });
});
