/**
 * `homeagent config-migrate [--config FILE] [--dry-run]`: writes the configuration file migrated to
 * this release's version (config-migrations.ts), keeping its comments, after a backup of the old
 * file next to it (`<file>.v<old version>.bak`, never overwritten). Run by root: the package's
 * postinst runs it on upgrade, since the service may not write /etc/homeagent. The file is
 * replaced atomically (a temporary file in the same folder, fsync, rename) with its mode and
 * owner kept, so a power cut leaves the old file or the new one.
 */
import { chmodSync, chownSync, closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { describeError, isHomeAgentError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { CONFIG_VERSION, type ConfigMigration, migrateConfigDocument } from './config-migrations.js';
import { chooseConfigFile, parseConfigFile, readConfigText } from './loader.js';

const USAGE = 'usage: homeagent config-migrate [--config FILE] [--dry-run]';

export interface ConfigMigrateResult {
  file: string | undefined;
  from: number;
  to: number;
  changes: string[];
  /** Where the old file was kept; undefined when nothing was written. */
  backup: string | undefined;
}

/** Migrates `file` (or the file the daemon would read) and writes it unless `dryRun`. */
export function migrateConfigFile(options: {
  file?: string;
  env?: NodeJS.ProcessEnv;
  systemFile?: string;
  dryRun?: boolean;
  /** For tests; default this release's migrations and version. */
  migrations?: readonly ConfigMigration[];
  current?: number;
}): ConfigMigrateResult {
  const chosen = chooseConfigFile({
    ...(options.file !== undefined && { file: options.file }),
    env: options.env ?? process.env,
    ...(options.systemFile !== undefined && { systemFile: options.systemFile }),
  });
  if (!chosen || (!chosen.required && !existsSync(chosen.path)))
    return { file: undefined, from: CONFIG_VERSION, to: CONFIG_VERSION, changes: [], backup: undefined };
  const path = chosen.path;
  const text = readConfigText(path);
  const { doc, from, to, changes } = migrateConfigDocument(parseConfigFile(text, path), path, options.migrations, options.current);
  if (from === to || options.dryRun) return { file: path, from, to, changes, backup: undefined };

  const backup = freeName(`${path}.v${from}.bak`);
  copyFileSync(path, backup);
  const stat = statSync(path);
  const temporary = join(dirname(path), `.${basename(path)}.migrating-${process.pid}`);
  const fd = openSync(temporary, 'w', stat.mode & 0o7777);
  try {
    writeSync(fd, doc.toString({ lineWidth: 0 }));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(temporary, stat.mode & 0o7777);
  if (process.getuid?.() === 0) chownSync(temporary, stat.uid, stat.gid);
  renameSync(temporary, path);
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
  return { file: path, from, to, changes, backup };
}

/** `<name>`, or `<name>.1`, `<name>.2`, ... when it exists: a backup never replaces an older one. */
function freeName(name: string): string {
  let candidate = name;
  for (let i = 1; existsSync(candidate); i++) candidate = `${name}.${i}`;
  return candidate;
}

export function runConfigMigrateCommand(argv: string[]): number {
  let values: { config?: string; 'dry-run'?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { config: { type: 'string', short: 'c' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    process.stderr.write(`homeagent config-migrate: ${describeError(error)}\n${USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT_CODES.OK;
  }
  try {
    const dryRun = values['dry-run'] === true;
    const result = migrateConfigFile({ ...(values.config !== undefined && { file: values.config }), dryRun });
    if (!result.file) process.stdout.write('no configuration file: nothing to migrate\n');
    else if (result.from === result.to)
      process.stdout.write(`${result.file} is at configuration version ${result.to}: nothing to migrate\n`);
    else {
      const verb = dryRun ? 'would migrate' : 'migrated';
      process.stdout.write(`${verb} ${result.file} from configuration version ${result.from} to ${result.to}\n`);
      for (const change of result.changes) process.stdout.write(`  ${change}\n`);
      if (result.backup) process.stdout.write(`the previous file is kept at ${result.backup}\n`);
    }
    return EXIT_CODES.OK;
  } catch (error) {
    process.stderr.write(`homeagent config-migrate: ${describeError(error)}\n`);
    return isHomeAgentError(error) ? EXIT_CODES.CONFIG : EXIT_CODES.SOFTWARE;
  }
}
