/**
 * The web page's Agents view, in Debian's chromium against the daemon: before anything it says
 * how sub-agents start; the model (the scripted LLM server) spawns a child, whose own turn answers,
 * and the view shows it done with its task, result and the conversation that started it; a second
 * child asks for a dangerous tool (cmd_run) and the view shows it waiting for the owner's
 * approval. In Chinese at 375 px the view speaks Chinese and is no wider than the screen.
 *
 * Time here is real (a daemon and a browser): every wait is for a condition, with a deadline.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chromiumMissing, launchChromium, login, overflow, startWebuiHome, step, streamedAnswer, toolCall } from '../helpers/browser.js';
import { REPO_ROOT } from '../helpers/daemon.js';
import type { ScriptStep } from '../helpers/scripted-llm-server.js';
import { until } from '../helpers/until.js';

const WAIT_MS = 20_000;
const PAGE_INDEX = join(REPO_ROOT, 'dist', 'plugins', 'webui', 'page', 'index.html');
const PHONE_375 = { width: 375, height: 812 };
const skip = chromiumMissing() ?? (existsSync(PAGE_INDEX) ? undefined : `${PAGE_INDEX} is missing: run \`npm run build\` first`);

const textReply = (text: string): ScriptStep => streamedAnswer([text]);

type Body = { messages: Array<{ role: string; content: string | null }> };
const lastUser = (body: Body) => String([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
const isChild = (body: Body) => String(body.messages[0]?.content ?? '').includes('You are a sub-agent of HomeAgent');

interface Children {
  running: number;
  children: Array<{ task_id: string; state: string; awaiting_approval: string[] }>;
}

t.test('the Agents view', { skip: skip ?? false }, async (t) => {
  const home = await startWebuiHome(t);
  const parent = new Map<string, ScriptStep[]>();
  const children: ScriptStep[] = [];
  home.llm.replyFn = (raw) => {
    const body = raw as Body;
    if (isChild(body)) return children.shift() ?? textReply('nothing scripted for the child');
    if (lastUser(body).startsWith('[sub-agent ')) return textReply('The sub-agent has finished.');
    return parent.get(lastUser(body))?.shift() ?? textReply('nothing scripted');
  };
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB' });
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await login(page, home);

  await step(t, page, 'before any sub-agent the view says how one starts', async () => {
    await page.goto(`${home.url}#/agents`);
    await page.getByTestId('agents-empty').waitFor();
  });

  const ASK = 'research a quick pasta recipe in the background';
  parent.set(ASK, [
    toolCall('spawn_child', { task: 'Find a quick pasta recipe.' }, 'call_spawn'),
    textReply('I started a sub-agent on it.'),
  ]);
  children.push(textReply('Pasta: boil it 10 minutes, then add the sauce.'));
  await home.call('agent.chat', { text: ASK });
  const done = await until(
    'the child to finish',
    async () => (await home.api<Children>('GET', '/agents')).children.find((c) => c.state === 'done'),
    WAIT_MS,
  );

  await step(t, page, 'a finished child with its task, result and conversation', async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    const card = page.locator(`li.agent[data-task="${done.task_id}"]`);
    await card.waitFor();
    t.equal(await card.getByTestId('agent-state').textContent(), 'done');
    t.match(await card.locator('.agent-task').textContent(), /Find a quick pasta recipe\./);
    t.match(await card.getByTestId('agent-result').textContent(), /boil it 10 minutes/);
    t.match(await card.textContent(), /answered/, 'how it ended');
    t.match(await card.textContent(), /from /, 'and where it was started');
  });

  const RISKY = 'check the uptime in the background';
  parent.set(RISKY, [toolCall('spawn_child', { task: 'Run uptime.' }, 'call_spawn2'), textReply('Started.')]);
  // The child asks for cmd_run and stays there until the owner decides.
  children.push(toolCall('cmd_run', { argv: ['uptime'] }, 'child_cmd'), textReply('uptime waits for the owner.'));
  await home.call('agent.chat', { text: RISKY });
  const held = await until(
    'the second child to ask for approval',
    async () =>
      (await home.api<Children>('GET', '/agents')).children.find(
        (c) => c.awaiting_approval.length > 0 || (c.task_id !== done.task_id && c.state !== 'running'),
      ),
    WAIT_MS,
  );

  await step(t, page, "a child's dangerous call is shown waiting for the owner", async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    const card = page.locator(`li.agent[data-task="${held.task_id}"]`);
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    t.match(text, /cmd_run/, `the view names the held tool (${held.state}, waiting for ${held.awaiting_approval.join(', ') || 'nothing'})`);
  });

  await step(t, page, 'Chinese at 375 px', async () => {
    const phone = await browser.newContext({ viewport: PHONE_375, locale: 'zh-CN' });
    t.teardown(() => phone.close());
    const small = await phone.newPage();
    small.setDefaultTimeout(WAIT_MS);
    await login(small, home);
    await small.goto(`${home.url}#/agents`);
    await small.locator('li.agent').first().waitFor();
    t.match(await small.locator('nav.tabs a.active').textContent(), /子代理/);
    t.match(await small.locator(`li.agent[data-task="${done.task_id}"]`).getByTestId('agent-state').textContent(), /完成/);
    const o = await overflow(small);
    t.ok(o.scrollWidth <= PHONE_375.width, `${o.scrollWidth} px wide on a ${PHONE_375.width} px screen ${o.wide.join(', ')}`);
  });
  t.same(pageErrors, [], 'no script errors on the page');
});
