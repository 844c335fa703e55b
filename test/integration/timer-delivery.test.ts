/**
 * Where a timer rings, against the in-process daemon without a language model (the local intent
 * engine sets the timers and says them when they ring): one set with `homeagentctl chat` rings
 * after that command has exited, so not on the cli channel, which answers only a waiting request,
 * but on an announcement channel (core.agent.announce_channels: speaker, webui): the test machine's
 * speaker has no sound card, so the web page following the event stream; one set from the web page
 * while it is open rings there; with no page open, the log warns that nobody may hear it.
 */
import { get, type IncomingMessage } from 'node:http';
import t from 'tap';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';

const WAIT_MS = 20_000;

const daemon = await startDaemon(t);
await daemon.waitForReady(30_000);
const control = await RpcConnection.connect(daemon.socketPath);
t.teardown(() => control.close());
const answer = await control.request('webui.credentials', {});
if (!answer.ok) throw new Error(`webui.credentials: ${answer.error?.message}`);
const credentials = answer.result as { url: string; api_key: string };
const api = new URL('api/v1/', credentials.url);

interface StreamEvent {
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: event payloads are inspected freely in tests.
  data: any;
}

/** The web page's event stream: what it has received, a wait for one event, and a close. */
async function openEventStream() {
  const request = get(new URL('events', api), { headers: { 'x-api-key': credentials.api_key } });
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  if (response.statusCode !== 200) throw new Error(`GET /api/v1/events answered ${response.statusCode}`);
  t.teardown(() => response.destroy());
  response.setEncoding('utf8');
  const events: StreamEvent[] = [];
  let buffer = '';
  let wake = () => {};
  response.on('data', (text: string) => {
    buffer += text;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
    }
    wake();
  });
  const waitFor = (what: string, match: (e: StreamEvent) => boolean) =>
    new Promise<StreamEvent>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS);
      wake = () => {
        const found = events.find(match);
        if (found === undefined) return;
        clearTimeout(timer);
        resolve(found);
      };
      wake();
    });
  const close = async () => {
    response.destroy();
    // The daemon notices the closed stream when the socket closes on its side.
    await new Promise((resolve) => setTimeout(resolve, 200));
  };
  return { events, waitFor, close };
}

const timerLog = async (pattern: RegExp) =>
  (await daemon.waitForLog((l) => l.json?.subsystem === 'plugin.timer' && pattern.test(String(l.msg)), WAIT_MS)).json;

t.test('a timer set from the CLI rings on the open web page after the command has exited', async (t) => {
  const page = await openEventStream();
  const set = await daemon.ctl(['chat', '-m', 'set a timer for 2 seconds']);
  t.equal(set.code, 0, set.stderr);
  t.match(set.stdout, /Timer set for 2 seconds/);
  const fired = await timerLog(/fired on webui: cli cannot take a message now/);
  t.match(fired, { channel: 'webui', origin_channel: 'cli', delivery: 'announcement' });
  const rang = await page.waitFor('the ring on the page', (e) => e.event === 'agent.answer' && e.data.channel === 'webui');
  t.match(rang.data.text, /timer/i, `the page shows it: ${rang.data.text}`);
  await timerLog(/rang on webui: cli cannot take a message now.*: done/);
  await page.close();
});

t.test('a timer set from the web page rings there while the page is open', async (t) => {
  const page = await openEventStream();
  const response = await fetch(new URL('chat', api), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': credentials.api_key },
    body: JSON.stringify({ text: 'set a timer for 1 second', wait: true }),
  });
  const body = (await response.json()) as { result: { input_id: string; receipt: { text: string } } };
  t.match(body.result.receipt.text, /Timer set for 1 second/);
  const fired = await timerLog(/fired on webui, where it was set/);
  t.match(fired, { channel: 'webui', origin_channel: 'webui', delivery: 'origin' });
  await page.waitFor(
    'the ring',
    (e) => e.event === 'agent.answer' && e.data.channel === 'webui' && e.data.input_id !== body.result.input_id,
  );
  await page.close();
});

t.test('with no page open and a speaker without a sound card, the log says nobody may hear it', async (t) => {
  const set = await daemon.ctl(['chat', '-m', 'set a timer for 1 second']);
  t.equal(set.code, 0, set.stderr);
  const fired = await timerLog(/fired on cli, though nobody may hear it/);
  t.match(fired, { level: 'warn', delivery: 'nowhere' });
  t.match(String(fired?.msg), /core\.agent\.announce_channels: speaker, webui/);
});
