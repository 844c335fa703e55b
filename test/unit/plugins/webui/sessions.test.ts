/**
 * Sessions: random ids stored only as digests, an absolute lifetime, a cap that ends the oldest,
 * logout, and a file that survives restarts (a damaged one logs everyone out, nothing worse).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  clearedSessionCookie,
  SESSIONS_FILE,
  SessionStore,
  sessionCookie,
  sessionIdFromCookie,
} from '../../../../plugins/webui/sessions.js';
import { captureLogs, tempDir } from '../../fixtures/support.js';

function store(dir: string, clock: { now: number }, options: { ttl?: number; max?: number } = {}) {
  const captured = captureLogs();
  const sessions = new SessionStore({
    dataDir: dir,
    ttlMs: () => options.ttl ?? 60_000,
    maxSessions: () => options.max ?? 10,
    now: () => clock.now,
    log: captured.logs.child('plugin.webui'),
  });
  sessions.load();
  return { sessions, captured };
}

t.test('a session is valid until its ttl from the login, then gone', (t) => {
  const clock = { now: 1_000 };
  const { sessions } = store(tempDir(t), clock);
  const session = sessions.create();
  t.match(session.id, /^[A-Za-z0-9_-]{43}$/, '256 random bits');
  t.same(sessions.verify(session.id), { created_at: 1_000, expires_at: 61_000 });
  clock.now = 60_999;
  t.ok(sessions.verify(session.id), 'using it does not extend it');
  clock.now = 61_000;
  t.equal(sessions.verify(session.id), undefined);
  t.equal(sessions.size, 0);
  t.end();
});

t.test('unknown, malformed and missing ids are not sessions', (t) => {
  const { sessions } = store(tempDir(t), { now: 0 });
  const session = sessions.create();
  for (const id of [undefined, '', 'x', `${session.id}x`, session.id.slice(1), session.id.toUpperCase()]) {
    t.equal(sessions.verify(id), undefined, JSON.stringify(id));
  }
  t.end();
});

t.test('logout ends exactly its session; endAll ends every one', (t) => {
  const { sessions } = store(tempDir(t), { now: 0 });
  const a = sessions.create();
  const b = sessions.create();
  t.equal(sessions.end(a.id), true);
  t.equal(sessions.end(a.id), false, 'already ended');
  t.equal(sessions.verify(a.id), undefined);
  t.ok(sessions.verify(b.id));
  sessions.create();
  t.equal(sessions.endAll(), 2);
  t.equal(sessions.verify(b.id), undefined);
  t.end();
});

t.test('max_sessions: a new login ends the oldest', (t) => {
  const clock = { now: 0 };
  const { sessions } = store(tempDir(t), clock, { max: 2 });
  const ids = [0, 1, 2].map(() => {
    clock.now += 10;
    return sessions.create().id;
  });
  t.equal(sessions.verify(ids[0]), undefined, 'the oldest was ended');
  t.ok(sessions.verify(ids[1]));
  t.ok(sessions.verify(ids[2]));
  t.equal(sessions.size, 2);
  t.end();
});

t.test('the file keeps digests only and survives a restart; expired rows are dropped at load', (t) => {
  const dir = tempDir(t);
  const clock = { now: 0 };
  const first = store(dir, clock, { ttl: 100 }).sessions;
  const old = first.create();
  clock.now = 50;
  const fresh = first.create();
  const text = readFileSync(join(dir, SESSIONS_FILE), 'utf8');
  t.notMatch(text, old.id);
  t.notMatch(text, fresh.id);
  t.match(JSON.parse(text), [{ digest: /^[0-9a-f]{64}$/, created_at: 0, expires_at: 100 }, { created_at: 50 }]);

  clock.now = 120;
  const second = store(dir, clock, { ttl: 100 }).sessions;
  t.equal(second.size, 1, 'the expired one was not loaded');
  t.ok(second.verify(fresh.id), 'a restart keeps the login');
  t.end();
});

t.test('a damaged file logs everyone out with a warning, and bad rows are skipped', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, SESSIONS_FILE), '{"not": "a list"');
  const { sessions, captured } = store(dir, { now: 0 });
  t.equal(sessions.size, 0);
  t.match(captured.records(), [{ level: 'warn', msg: /damaged/ }]);

  writeFileSync(
    join(dir, SESSIONS_FILE),
    JSON.stringify([null, { digest: 'zz', created_at: 0, expires_at: 99 }, { digest: 'a'.repeat(64), created_at: 0, expires_at: 99 }, 7]),
  );
  t.equal(store(dir, { now: 0 }).sessions.size, 1, 'only the well-formed row');
  t.end();
});

t.test('cookies: parsing and the attributes', (t) => {
  t.equal(sessionIdFromCookie(undefined), undefined);
  t.equal(sessionIdFromCookie('a=1; ha_session=abc; b=2'), 'abc');
  t.equal(sessionIdFromCookie('ha_sessionx=1; xha_session=2'), undefined);
  t.equal(sessionIdFromCookie('ha_session=first; ha_session=second'), 'first');
  t.equal(sessionCookie('id', 86_400_000, false), 'ha_session=id; HttpOnly; SameSite=Strict; Path=/; Max-Age=86400');
  t.equal(sessionCookie('id', 1500, true), 'ha_session=id; HttpOnly; SameSite=Strict; Path=/; Max-Age=1; Secure');
  t.equal(clearedSessionCookie(false), 'ha_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0');
  t.end();
});
