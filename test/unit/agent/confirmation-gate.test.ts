import t from 'tap';
import { ConfirmationGate, MAX_PENDING_CONFIRMATIONS } from '../../../src/agent/confirmation-gate.js';
import type { ToolDefinition } from '../../../src/shared/tool.js';
import { call, makeInput, tool } from './fixtures/helpers.js';

function gate(preauthorized: string[] = [], ttlMs = 60_000) {
  let now = 1_000_000;
  const g = new ConfirmationGate({ preauthorized: () => preauthorized, ttlMs: () => ttlMs, now: () => now });
  return {
    g,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const dangerous = (name = 'cmd_run'): ToolDefinition => tool(name, () => 'ran', { tier: 'dangerous' });

t.test('read and act tools pass; dangerous ones are held with a code', async (t) => {
  const { g } = gate();
  t.same(
    g.check(
      tool('lamp', () => 1, { tier: 'act' }),
      call('lamp'),
      makeInput(),
      'task-1',
    ),
    { allowed: true, preauthorized: false },
  );
  t.same(
    g.check(
      tool('look', () => 1, { tier: 'read' }),
      call('look'),
      makeInput(),
      'task-1',
    ),
    { allowed: true, preauthorized: false },
  );
  const verdict = g.check(dangerous(), call('cmd_run', { argv: ['ls'] }), makeInput({ channel: 'cli', source: 'cli' }), 'task-1');
  t.equal(verdict.allowed, false);
  if (verdict.allowed) return;
  t.match(verdict.pending.code, /^[ACDEFGHJKMNPQRTUVWXY34679]{6}$/);
  t.match(verdict.pending, { tool: 'cmd_run', channel: 'cli', source: 'cli', task_id: 'task-1' });
  t.same(g.requestedBy('task-1'), [verdict.pending]);
  t.same(g.requestedBy('task-2'), []);
  const text = g.requestText(verdict.pending);
  t.match(text, 'cmd_run with {"argv":["ls"]}');
  t.match(text, `/confirm ${verdict.pending.code}`);
});

t.test('pre-authorised names and patterns run without asking', async (t) => {
  const { g } = gate(['files_write', 'mcp_home_*']);
  t.same(g.check(dangerous('files_write'), call('files_write'), makeInput(), 't'), { allowed: true, preauthorized: true });
  t.same(g.check(dangerous('mcp_home_open_garage'), call('mcp_home_open_garage'), makeInput(), 't'), {
    allowed: true,
    preauthorized: true,
  });
  t.equal(g.check(dangerous('mcp_work_x'), call('mcp_work_x'), makeInput(), 't').allowed, false);
  t.equal(g.check(dangerous('files_write2'), call('files_write2'), makeInput(), 't').allowed, false, 'patterns match whole names');
});

t.test('a confirmation runs once, only from the same channel and source, before it expires', async (t) => {
  const { g, advance } = gate([], 60_000);
  const verdict = g.check(dangerous(), call('cmd_run'), makeInput({ channel: 'qq:123', source: 'qq' }), 'task-1');
  if (verdict.allowed) return t.fail('should be held');
  const code = verdict.pending.code;
  t.same(g.match(makeInput({ payload: 'what time is it?' })), { kind: 'none' });
  t.same(g.match(makeInput({ payload: { confirm: code } })), { kind: 'none' }, 'structured payloads are not confirmations');
  t.match(g.match(makeInput({ payload: `/confirm ${code}`, channel: 'mqtt', source: 'mqtt' })), {
    kind: 'refused',
    text: /another conversation/,
  });
  t.match(
    g.match(makeInput({ payload: `/confirm ${code}`, channel: 'qq:123', source: 'mqtt' })),
    { kind: 'refused' },
    'same channel, other source',
  );
  t.match(g.match(makeInput({ payload: '/confirm ZZZZZZ', channel: 'qq:123', source: 'qq' })), {
    kind: 'refused',
    text: /no pending action/,
  });
  const ok = g.match(makeInput({ payload: `  确认 ${code.toLowerCase()} `, channel: 'qq:123', source: 'qq' }));
  t.match(ok, { kind: 'confirmed', pending: { code, tool: 'cmd_run' } }, 'Chinese keyword and lower case are accepted');
  t.match(g.match(makeInput({ payload: `/confirm ${code}`, channel: 'qq:123', source: 'qq' })), { kind: 'refused' }, 'a code runs once');

  const late = g.check(dangerous(), call('cmd_run'), makeInput(), 'task-2');
  if (late.allowed) return t.fail('should be held');
  advance(60_001);
  t.match(g.match(makeInput({ payload: `confirm ${late.pending.code}` })), { kind: 'refused', text: /expired/ });
  t.same(g.requestedBy('task-2'), [], 'expired requests are forgotten');
});

t.test('at most MAX_PENDING_CONFIRMATIONS are kept, oldest dropped first', async (t) => {
  const { g } = gate();
  const codes: string[] = [];
  for (let i = 0; i < MAX_PENDING_CONFIRMATIONS + 3; i++) {
    const v = g.check(dangerous(), call('cmd_run'), makeInput(), `task-${i}`);
    if (!v.allowed) codes.push(v.pending.code);
  }
  t.equal(new Set(codes).size, codes.length, 'codes are unique');
  t.match(g.match(makeInput({ payload: `/confirm ${codes[0]}` })), { kind: 'refused' });
  t.match(g.match(makeInput({ payload: `/confirm ${codes.at(-1)}` })), { kind: 'confirmed' });
});

t.test('long arguments are cut in the request text, with their length', async (t) => {
  const { g } = gate();
  const v = g.check(dangerous('files_write'), call('files_write', { path: 'a', content: 'x'.repeat(5000) }), makeInput(), 't');
  if (v.allowed) return t.fail('should be held');
  t.match(g.requestText(v.pending), /… \(\d+ characters\)/);
});
