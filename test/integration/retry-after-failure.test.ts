/**
 * `homeagentctl chat` retried after a failed attempt, against the in-process daemon and a scripted
 * OpenAI-compatible server: the attempt whose model refused the request does not hold the dedupe
 * window (core.agent.dedupe_window_ms, 10 s), so the retry runs at once; the same message after a
 * successful answer is still skipped as a duplicate.
 */
import t from 'tap';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

function textReply(text: string): ScriptStep {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return { sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: text }), chunk({}, 'stop')], done: true };
}

t.test('a retry after a failed attempt runs; a repeat after a success is a duplicate', async (t) => {
  const server = await startScriptedServer(t);
  // 400 refuses this request only: no cool-down, so the retry reaches the server again.
  server.enqueue({ status: 400, body: { error: { message: 'the request was refused for the test', type: 'invalid_request_error' } } });
  server.enqueue(textReply('Here is a joke.'));
  const daemon = await startDaemon(t, { env: { HOMEAGENT_LLM_BASE_URL: server.url, HOMEAGENT_LLM_API_KEY: 'sk-test' } });
  await daemon.waitForReady();

  const failed = await daemon.ctl(['chat', '-m', 'tell me a joke']);
  t.equal(failed.code, 0, failed.stderr);
  t.match(failed.stdout, /could not reach a language model/);

  const retry = await daemon.ctl(['chat', '-m', 'tell me a joke']);
  t.equal(retry.code, 0, retry.stderr);
  t.match(retry.stdout, /Here is a joke\./, 'the retry within the dedupe window ran');
  t.notMatch(retry.stderr, /duplicate/);

  const repeat = await daemon.ctl(['chat', '-m', 'tell me a joke']);
  t.equal(repeat.code, 1, 'the same message right after a success is skipped');
  t.match(repeat.stderr, /skipped: duplicate/);
  t.equal(server.requests.length, 2, 'the skipped repeat never reached the model');
});
