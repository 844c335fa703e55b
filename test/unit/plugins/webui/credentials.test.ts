/**
 * The credential file: made once, private, atomic; a damaged file stops the start with its name
 * and is left as it is; a reset replaces one secret and keeps the other.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CREDENTIALS_FILE, CredentialStore, randomApiKey, randomPassword, writeFileAtomic } from '../../../../plugins/webui/credentials.js';
import { expectError, tempDir } from '../../fixtures/support.js';

t.test('the first load makes both secrets and stores them with mode 0600; the next load reads them', (t) => {
  const dir = tempDir(t);
  let now = Date.parse('2026-01-02T03:04:05Z');
  const store = new CredentialStore({ dataDir: dir, now: () => now });
  const first = store.load();
  t.equal(first.created, true);
  const file = join(dir, CREDENTIALS_FILE);
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.same(JSON.parse(readFileSync(file, 'utf8')), first.credentials);
  t.equal(first.credentials.created_at, '2026-01-02T03:04:05.000Z');
  t.same(readdirSync(dir), [CREDENTIALS_FILE], 'no temporary file left behind');

  now += 1000;
  const second = new CredentialStore({ dataDir: dir, now: () => now }).load();
  t.equal(second.created, false);
  t.same(second.credentials, first.credentials);
  t.end();
});

t.test('comparisons: the exact secret only', (t) => {
  const store = new CredentialStore({ dataDir: tempDir(t) });
  const { credentials } = store.load();
  t.ok(store.passwordMatches(credentials.password));
  for (const wrong of [
    '',
    credentials.password.slice(0, -1),
    `${credentials.password} `,
    credentials.password.toUpperCase(),
    credentials.api_key,
  ]) {
    t.notOk(store.passwordMatches(wrong), JSON.stringify(wrong));
  }
  t.ok(store.apiKeyMatches([credentials.api_key]));
  t.ok(store.apiKeyMatches(['stale', credentials.api_key]), 'one right key among several');
  t.notOk(store.apiKeyMatches([]));
  t.notOk(store.apiKeyMatches([credentials.password]));
  t.end();
});

t.test('reset replaces one secret, keeps the other, and stores the change', (t) => {
  const dir = tempDir(t);
  const store = new CredentialStore({ dataDir: dir });
  const before = store.load().credentials;
  const afterPassword = store.reset('password');
  t.not(afterPassword.password, before.password);
  t.equal(afterPassword.api_key, before.api_key);
  t.notOk(store.passwordMatches(before.password), 'the old password no longer works');
  t.ok(store.passwordMatches(afterPassword.password));
  const afterKey = store.reset('api_key');
  t.not(afterKey.api_key, before.api_key);
  t.equal(afterKey.password, afterPassword.password);
  t.notOk(store.apiKeyMatches([before.api_key]));
  t.same(new CredentialStore({ dataDir: dir }).load().credentials, afterKey, 'stored');
  t.equal(afterKey.created_at, before.created_at);
  t.end();
});

t.test('a damaged file stops the start with its name and is left untouched', (t) => {
  const dir = tempDir(t);
  const file = join(dir, CREDENTIALS_FILE);
  for (const [label, text, message] of [
    ['not JSON', '{"password": ', /not valid JSON/],
    ['no password', '{"api_key": "ha_aaaaaaaaaaaa"}', /no usable password/],
    ['short key', '{"password": "aaaaaaaaaa", "api_key": "x"}', /no usable api_key/],
    ['a list', '[]', /no usable password/],
  ] as const) {
    writeFileSync(file, text, { mode: 0o600 });
    const error = expectError(t, () => new CredentialStore({ dataDir: dir }).load(), 'HA_ERR_PLUGIN_START');
    t.match(error.message, message, label);
    t.match(error.message, file, `${label}: names the file`);
    t.equal(readFileSync(file, 'utf8'), text, `${label}: untouched`);
  }
  t.end();
});

t.test('a file readable by others is made private again', (t) => {
  const dir = tempDir(t);
  new CredentialStore({ dataDir: dir }).load();
  const file = join(dir, CREDENTIALS_FILE);
  chmodSync(file, 0o644);
  new CredentialStore({ dataDir: dir }).load();
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.end();
});

t.test('generated secrets: format and no repeats', (t) => {
  const passwords = new Set(Array.from({ length: 200 }, randomPassword));
  t.equal(passwords.size, 200);
  for (const password of passwords) t.match(password, /^[a-hjkmnp-z2-9]{5}(-[a-hjkmnp-z2-9]{5}){3}$/);
  t.match(randomApiKey(), /^ha_[A-Za-z0-9_-]{32}$/);
  t.end();
});

t.test('an atomic write that cannot rename leaves neither the target nor a temporary file changed', (t) => {
  const dir = tempDir(t);
  const target = join(dir, 'target');
  mkdirSync(target);
  t.throws(() => writeFileAtomic(target, 'secret', 0o600));
  t.same(readdirSync(dir), ['target'], 'the temporary file was removed');
  t.end();
});
