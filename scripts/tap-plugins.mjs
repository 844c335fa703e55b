// Builds tap with the plugins package.json's tap.plugin names (no @tapjs/typescript) before the
// suite starts. tap rebuilds itself when its plugins differ from the configured ones, but only for
// the next run: the run that notices still hands every test file the old loaders. On a fresh
// `npm ci` that is every file of CI's one run loading ts-node (about 0.8 s each, ~376 files).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { TapConfig } from '@tapjs/config';

// The built test class names its plugins in one exported string (read, not imported: importing
// @tapjs/test on its own trips over its circular imports).
const builtIndex = createRequire(import.meta.url)
  .resolve('@tapjs/test/test-built')
  .replace('/commonjs/', '/esm/');
const built = /^export const signature = `([^`]*)`/m.exec(readFileSync(builtIndex, 'utf8'))?.[1]?.trim();
const config = await TapConfig.load();
if (built !== config.pluginSignature) {
  const build = spawnSync('npx', ['--no-install', 'tap', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) {
    console.error('tap could not be built with the configured plugins (npx tap build)');
    process.exit(build.status ?? 1);
  }
}
