/**
 * `homeagent restore FILE --db NAME` from the command line (src/main.ts run from source): a plugin
 * database's backup lands in <data>/plugin-data/<plugin>/<name>.db, a name that is no database is
 * refused with exit 65 naming the known ones, and a misplaced --db is a usage error, in the
 * terminal's language.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { systemClock } from '../../../src/shared/clock.js';
import { ManagedDatabase } from '../../../src/store/database.js';
import { cleanEnv, emptyConfig, nodeCommand, REPO_ROOT } from '../../helpers/daemon.js';
import { silentLogs, type Teardown, tempDir } from '../fixtures/support.js';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function homeagent(args: string[], dataDir: string, lang = 'C'): Promise<Ran> {
  const env = cleanEnv({
    LANG: lang,
    LC_ALL: undefined,
    LC_MESSAGES: undefined,
    HOMEAGENT_CONFIG: emptyConfig(),
    HOMEAGENT_DATA_DIR: dataDir,
  });
  const loader = process.execArgv.filter((arg) => /swc-register/.test(arg));
  const command = nodeCommand([...loader, join(REPO_ROOT, 'src', 'main.ts'), ...args], env);
  return new Promise((resolve) => {
    execFile(command.command, command.args, { cwd: REPO_ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

/** A backup of a `seq` database with one sequence row, made with the online backup API. */
async function seqBackup(t: Teardown, dir: string): Promise<string> {
  const source = ManagedDatabase.open(
    { name: 'seq.sequences', file: join(dir, 'source.db'), synchronous: 'FULL' },
    { busyTimeoutMs: 1000, startupCheck: 'off', log: silentLogs().child('store'), clock: systemClock },
  );
  t.teardown(() => source.close());
  source.migrate('seq', [{ version: 1, name: 'rows', up: (db) => void db.exec('CREATE TABLE rows (text TEXT NOT NULL)') }]);
  source.db.prepare('INSERT INTO rows (text) VALUES (?)').run('bedtime');
  const file = join(dir, 'seq-backup.db');
  await source.backup(file);
  source.close();
  return file;
}

t.test('restore --db seq.sequences puts the backup in the plugin folder', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const backup = await seqBackup(t, dir);
  const ran = await homeagent(['restore', backup, '--db', 'seq.sequences'], dataDir);
  const target = join(dataDir, 'plugin-data', 'seq', 'sequences.db');
  t.equal(ran.code, 0, ran.stderr);
  t.equal(ran.stdout, `restored ${target} from ${backup}\n`);
  const db = new Database(target, { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  t.same(db.prepare('SELECT text FROM rows').all(), [{ text: 'bedtime' }]);

  const zh = await homeagent(['restore', backup, '--db', 'seq.sequences'], dataDir, 'zh_CN.UTF-8');
  t.equal(zh.code, 0, zh.stderr);
  t.match(zh.stdout, `已从 ${backup} 恢复 ${target}；原数据库保留在 ${target}.before-restore-`);
});

t.test('restore refuses an unknown database name and a backup of another plugin; --db elsewhere is a usage error', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const backup = await seqBackup(t, dir);
  const unknown = await homeagent(['restore', backup, '--db', 'sequences'], dataDir);
  t.equal(unknown.code, 65);
  t.match(unknown.stderr, 'no database named sequences; known: state, memory, knowledge, home');
  const other = await homeagent(['restore', backup, '--db', 'timer.timers'], dataDir);
  t.equal(other.code, 65);
  t.match(other.stderr, 'holds no tables of timer');
  t.notOk(existsSync(join(dataDir, 'plugin-data')), 'nothing was written');

  const misplaced = await homeagent(['version', '--db', 'state'], dataDir, 'zh_CN.UTF-8');
  t.equal(misplaced.code, 64);
  t.match(misplaced.stderr, '--db 只用于 restore');
});
