/**
 * The seq plugin's own database in the built daemon is one of the household's databases:
 * `homeagentctl status` lists seq.sequences, `homeagentctl backup --db seq.sequences` copies it
 * with the sequence the model made, it leaves the list while the plugin is disabled (backup then
 * refuses the name) and comes back when enabled and after a reload, and `homeagent restore FILE
 * --db seq.sequences` with the daemon stopped brings a deleted sequence back.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import t from 'tap';
import { runHomeagent, tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

const WAIT_MS = 60_000;

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-seq',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

const toolCall = (id: string, name: string, args: unknown): ScriptStep => ({
  sse: [
    chunk({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
    }),
    chunk({}, 'tool_calls'),
  ],
  done: true,
});

const textReply = (text: string): ScriptStep => ({
  sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: text }), chunk({}, 'stop')],
  done: true,
});

const BEDTIME = { name: 'bedtime', description: 'the timers', groups: [{ name: 'show', calls: [{ tool: 'timer_list', as: 'timers' }] }] };

const databaseNames = async (daemon: { ctl(args: string[]): Promise<{ json(): unknown }> }) =>
  ((await daemon.ctl(['status', '--json'])).json() as { databases: Array<{ name: string }> }).databases.map((d) => d.name);

t.test('seq.sequences: listed, backed up, gone while disabled, restored offline', async (t) => {
  const llm = await startScriptedServer(t);
  const dir = tempDir(t, 'ha-seq-backup-');
  const dataDir = join(dir, 'data');
  const config = join(dir, 'config.yaml');
  writeFileSync(config, JSON.stringify({ core: { llm: { base_url: llm.url, api_key: 'sk-llm', model: 'test-model' } } }));
  let daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);

  llm.enqueue(toolCall('call_create', 'seq_create', BEDTIME), textReply('Made "bedtime".'));
  const made = await daemon.ctl(['chat', '-m', 'make a bedtime sequence'], { timeoutMs: WAIT_MS });
  t.equal(made.code, 0, made.stderr);

  t.ok((await databaseNames(daemon)).includes('seq.sequences'), 'status lists the plugin database');
  const backup = join(tempDir(t, 'ha-seq-backup-file-'), 'seq.db');
  const b = await daemon.ctl(['backup', backup, '--db', 'seq.sequences']);
  t.equal(b.code, 0, b.stderr);
  t.match(b.stdout, `backed up seq.sequences database to ${backup}`);
  const copy = new BetterSqlite3(backup, { readonly: true, fileMustExist: true });
  t.same(copy.prepare('SELECT name FROM sequences').all(), [{ name: 'bedtime' }], 'the backup holds the sequence');
  copy.close();

  t.equal((await daemon.ctl(['plugins', 'disable', 'seq'])).code, 0);
  t.notOk((await databaseNames(daemon)).includes('seq.sequences'), 'not listed while the plugin is off');
  const refused = await daemon.ctl(['backup', '--db', 'seq.sequences'], { env: { LANG: 'C' } });
  t.not(refused.code, 0);
  t.match(refused.stderr, /no database named seq\.sequences; known: state, memory, knowledge, home/);
  t.equal((await daemon.ctl(['plugins', 'enable', 'seq'])).code, 0);
  t.ok((await databaseNames(daemon)).includes('seq.sequences'), 'listed again when enabled');
  t.equal((await daemon.ctl(['plugins', 'reload', 'seq'])).code, 0);
  t.equal((await databaseNames(daemon)).filter((name) => name === 'seq.sequences').length, 1, 'listed once after a reload');

  t.equal((await daemon.ctl(['sequences', 'delete', 'bedtime'])).code, 0, 'deleted after the backup');
  await daemon.dispose();

  const restored = await runHomeagent(['restore', backup, '--db', 'seq.sequences'], { dataDir, env: { HOMEAGENT_CONFIG: config } });
  t.equal(restored.code, 0, restored.stderr);
  const file = join(dataDir, 'plugin-data', 'seq', 'sequences.db');
  t.match(restored.stdout, `restored ${file} from ${backup}; the previous database is kept at ${file}.before-restore-`);

  daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady(WAIT_MS);
  const list = await daemon.ctl(['sequences']);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /bedtime/, 'the restored sequence is back');
  t.ok(existsSync(file));
});
