// `homeagentctl confirm` (src/cli/confirm.ts): argument parsing, the waiting list, approve and deny against a fake daemon.
import t from 'tap';
import { ConfirmUsageError, formatPending, parseConfirmCommand, runConfirm } from '../../../src/cli/confirm.js';
import type { ConfirmationRequest } from '../../../src/events/event-bus.js';

const waiting: ConfirmationRequest = {
  code: 'K7QX2M',
  tool: 'cmd_run',
  arguments: '{"argv":["id"]}',
  origin: { input_id: 'in-1', source: 'mqtt', channel: 'mqtt', sender: { trust: 'untrusted', id: 'mqtt', proof: 'an MQTT payload' } },
  trust: { level: 'untrusted', lowered_by: ['the output of files_read'] },
  inline: false,
  created_at: 1_000_000,
  expires_at: 1_600_000,
  text: '[Confirmation needed] …',
};

t.test('parseConfirmCommand: list by default, approve and deny take one code', async (t) => {
  t.same(parseConfirmCommand([]), { command: 'list' });
  t.same(parseConfirmCommand(['list']), { command: 'list' });
  t.same(parseConfirmCommand(['approve', 'k7qx2m']), { command: 'approve', code: 'K7QX2M' });
  t.same(parseConfirmCommand(['deny', 'K7QX2M']), { command: 'deny', code: 'K7QX2M' });
  for (const [args, message] of [
    [['list', 'x'], /takes no arguments/],
    [['approve'], /needs one six-character CODE/],
    [['approve', 'K7QX2'], /needs one six-character CODE/],
    [['deny', 'K7QX2M', 'more'], /needs one six-character CODE/],
    [['run', 'K7QX2M'], /unknown confirm command run/],
  ] as Array<[string[], RegExp]>) {
    const error = (() => {
      try {
        parseConfirmCommand(args);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    t.ok(error instanceof ConfirmUsageError, `${args.join(' ')}: a usage error`);
    t.match(String(error), message);
  }
});

t.test('the list shows exactly what would run, who asked, how trusted, and how to decide', async (t) => {
  t.equal(formatPending([], 0), 'nothing waits for your approval');
  const text = formatPending([waiting], 1_000_000);
  t.match(text, 'K7QX2M  cmd_run {"argv":["id"]}');
  t.match(text, 'asked on mqtt by mqtt (untrusted: an MQTT payload); it had read the output of files_read');
  t.match(text, 'expires in 600 s; homeagentctl confirm approve K7QX2M | deny K7QX2M');
});

t.test('approve and deny call the owner-only methods; a failed run exits 1', async (t) => {
  const calls: Array<[string, object]> = [];
  let receipt: object = { status: 'done', text: 'Confirmed: cmd_run ran. Result: uid=1000' };
  const out: string[] = [];
  const options = {
    connect: async () => ({
      call: async (method: string, params: object) => {
        calls.push([method, params]);
        if (method === 'confirm.approve') return { code: 'K7QX2M', tool: 'cmd_run', receipt };
        if (method === 'confirm.deny') return { code: 'K7QX2M', tool: 'cmd_run', denied: true };
        return { pending: [waiting] };
      },
      close: () => {},
    }),
    json: false,
    timeoutMs: 1000,
    stdout: { write: (text: string) => out.push(text) },
    now: () => 1_000_000,
  };
  t.equal(await runConfirm({ command: 'approve', code: 'K7QX2M' }, options), 0);
  t.match(out.at(-1), 'Confirmed: cmd_run ran. Result: uid=1000');
  receipt = { status: 'failed', error: { message: 'the daemon is stopping' } };
  t.equal(await runConfirm({ command: 'approve', code: 'K7QX2M' }, options), 1);
  t.match(out.at(-1), 'cmd_run: failed: the daemon is stopping');
  t.equal(await runConfirm({ command: 'deny', code: 'K7QX2M' }, options), 0);
  t.match(out.at(-1), 'refused K7QX2M: cmd_run will not run');
  t.equal(await runConfirm({ command: 'list' }, options), 0);
  t.same(
    calls.map(([method]) => method),
    ['confirm.approve', 'confirm.approve', 'confirm.deny', 'confirm.list'],
  );
  t.same(calls[0]?.[1], { code: 'K7QX2M', channel: 'cli' }, 'the approval runs on the CLI conversation');
});
