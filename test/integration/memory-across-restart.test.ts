/**
 * Memory end to end through the built daemon: what the household says is stored durably, survives
 * a SIGKILL and a restart, comes back in the prompt of a later, related question (read-only, with
 * its date), and a question about something never said gets the "no record" instruction instead.
 */
import t from 'tap';
import { spawnDaemon, tempDir } from '../helpers/daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

function textReply(text: string): ScriptStep {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return { sse: [chunk({ role: 'assistant', content: text }), chunk({}, 'stop')], done: true };
}

t.test('a fact told before a kill -9 is recalled into the prompt after the restart', async (t) => {
  const server = await startScriptedServer(t);
  const env = { HOMEAGENT_LLM_BASE_URL: server.url, HOMEAGENT_LLM_API_KEY: 'sk-test', HOMEAGENT_LLM_MODEL: 'test-model' };
  const dataDir = tempDir(t);
  const first = spawnDaemon(t, { env, dataDir });
  await first.waitForReady();
  server.enqueue(textReply('Noted.'), textReply('Nice.'));
  t.equal((await first.ctl(['chat', '-m', 'The spare key for the garden shed is under the blue flower pot.'])).code, 0);
  t.equal((await first.ctl(['chat', '-m', 'We watered the tomatoes this morning.'])).code, 0);
  first.kill('SIGKILL');
  await first.waitForExit();

  const second = spawnDaemon(t, { env, dataDir });
  await second.waitForReady();
  server.enqueue(textReply('Under the blue flower pot.'), textReply('I have no record of that.'));
  const asked = await second.ctl(['chat', '-m', 'Where is the spare key for the shed?']);
  t.equal(asked.code, 0, asked.stderr);
  const system = String(server.requests.at(-1)?.body.messages[0].content ?? '');
  t.match(
    system,
    /\[Related documents\]\n- (?:\S+, )?today \(\d{4}-\d{2}-\d{2}\): .*blue flower pot/,
    'the remembered sentence is in the prompt, dated',
  );

  const never = await second.ctl(['chat', '-m', 'What colour is the neighbour’s submarine?']);
  t.equal(never.code, 0, never.stderr);
  const abstained = String(server.requests.at(-1)?.body.messages[0].content ?? '');
  t.match(abstained, /say you have no record of it/, 'nothing relevant: the prompt says there is no record');
});
