/**
 * Household memory through the real daemon with no model configured (issue 27): the owner on the
 * CLI is the person core.home.people names, never "cli"; what they said is found with that name;
 * the offline notice the kernel answered with is no memory; and "forget that" / "忘掉我刚才说的"
 * is answered on the device and takes the turn out of memory.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';

interface Hit {
  text?: string;
  line?: string;
  [key: string]: unknown;
}

t.test('the CLI owner is a person, what they said is found, and "forget that" forgets it', async (t) => {
  const configFile = join(tempDir(t, 'ha-people-'), 'config.yaml');
  writeFileSync(configFile, 'core:\n  home:\n    people:\n      - name: Anna\n        senders: [cli]\n');
  const daemon = await startDaemon(t, { configFile });
  await daemon.waitForReady();

  const told = await daemon.ctl(['chat', '-m', 'The spare key is under the blue flower pot.']);
  t.equal(told.code, 0, told.stderr);
  const found = await daemon.ctl(['memory', 'search', 'spare key', '--json']);
  t.equal(found.code, 0, found.stderr);
  const text = JSON.stringify(found.json());
  t.match(text, /blue flower pot/, 'what Anna said is found');
  t.match(text, /Anna/, 'and attributed to her');
  t.notMatch(text, /"cli"|cli的|offline/i, 'neither the transport nor the offline notice is memory');

  const forget = await daemon.ctl(['chat', '-m', 'forget that']);
  t.equal(forget.code, 0, forget.stderr);
  t.match(forget.stdout, /forgotten what you just said/);
  const after = await daemon.ctl(['memory', 'search', 'spare key', '--json']);
  t.notMatch(JSON.stringify(after.json()), /blue flower pot/, 'the forgotten turn is gone');

  t.equal((await daemon.ctl(['chat', '-m', '车停在地下车库B2。'])).code, 0);
  const zh = await daemon.ctl(['chat', '-m', '忘掉我刚才说的']);
  t.match(zh.stdout, /已经忘掉/);
  t.notMatch(JSON.stringify((await daemon.ctl(['memory', 'search', '车', '--json'])).json() as Hit[]), /B2/);
});
