/**
 * GET /api/v1/media/:id (a stored picture for the page's chat) and the /api/v1/sequences routes
 * (seq.list, seq.run, seq.delete) on the route harness: the media route answers a stored picture
 * with its sniffed type and the sandboxing headers, takes only digests (no path can be named), and
 * refuses sounds and unknown digests (a request without the session or key is refused by the auth
 * hook: test/integration/webui-sequences-images.test.ts); the sequence routes hand the
 * name from the path and the arguments from the body to the control methods, as the caller.
 */
import t from 'tap';
import { mediaDigest } from '../../../../plugins/webui/api-media.js';
import { pictureMime } from '../../../../src/sdk/index.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { apiHarness, Type } from './api-harness.js';

/** A real 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** The start of a WAV file: media the store keeps, but no picture. */
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt '), Buffer.alloc(32)]);

t.test('media ids: a digest, optionally prefixed; nothing else', async (t) => {
  const digest = 'a'.repeat(64);
  t.equal(mediaDigest(digest), digest);
  t.equal(mediaDigest(`sha256:${digest.toUpperCase()}`), digest, 'prefix and upper case: the same digest');
  t.equal(mediaDigest(`media:${digest}`), digest);
  for (const bad of ['../../etc/passwd', `${digest}/..`, digest.slice(1), `${digest}0`, '', 42, undefined])
    t.equal(mediaDigest(bad), undefined, `${JSON.stringify(bad)} is not a media id`);
  t.equal(pictureMime(PNG), 'image/png');
  t.equal(pictureMime(WAV), undefined, 'a sound is not a picture');
});

t.test('a stored picture is served to the owner, with its type read from the bytes', async (t) => {
  const h = await apiHarness(t);
  const stored = h.tc.media.put(PNG);
  const reply = await h.app.inject({ method: 'GET', url: `/api/v1/media/${stored.digest}` });
  t.equal(reply.statusCode, 200);
  t.same(reply.rawPayload, PNG, 'the stored bytes');
  t.equal(reply.headers['content-type'], 'image/png');
  t.equal(reply.headers['x-content-type-options'], 'nosniff');
  t.match(reply.headers['content-security-policy'], /^sandbox;/, 'a picture opened directly runs no script');
  t.match(reply.headers['cache-control'], /private/, 'kept by this browser only');
  t.equal(reply.headers['cross-origin-resource-policy'], 'same-origin', 'no other site embeds it');
  t.match(reply.headers['content-disposition'], /^inline; filename="[0-9a-f]{16}\.png"$/);
  const prefixed = await h.app.inject({ method: 'GET', url: `/api/v1/media/sha256:${stored.digest}` });
  t.equal(prefixed.statusCode, 200, 'the sha256: form an output may carry');
});

t.test('refused: not a digest, not stored, not a picture, not the owner, a query', async (t) => {
  const h = await apiHarness(t);
  const sound = h.tc.media.put(WAV);
  const picture = h.tc.media.put(PNG);
  const cases: Array<[string, string, number, string, Record<string, string>?]> = [
    ['a path', '/api/v1/media/..%2F..%2Fconfig.yaml', 400, 'HA_ERR_RPC_INVALID_PARAMS'],
    ['a short id', `/api/v1/media/${picture.digest.slice(2)}`, 400, 'HA_ERR_RPC_INVALID_PARAMS'],
    ['an unknown digest', `/api/v1/media/${'0'.repeat(64)}`, 404, 'HA_ERR_HTTP_NOT_FOUND'],
    ['a sound', `/api/v1/media/${sound.digest}`, 404, 'HA_ERR_HTTP_NOT_FOUND'],
    ['a query', `/api/v1/media/${picture.digest}?download=1`, 400, 'HA_ERR_RPC_INVALID_PARAMS'],
  ];
  for (const [what, url, status, code] of cases) {
    const reply = await h.request({ method: 'GET', url });
    t.equal(reply.status, status, what);
    t.match(reply.json, { ok: false, error: { code } }, what);
    t.notMatch(String(reply.headers['content-type']), /^image\//, `${what}: no picture`);
  }
});

t.test('sequences: list, run with arguments and delete by the name in the path, as the caller', async (t) => {
  const h = await apiHarness(t);
  const names = new Set(['good night']);
  h.method('seq.list', Type.Object({}), () => ({ sequences: [...names].map((name) => ({ name, tier: 'act', groups: [] })) }));
  h.method(
    'seq.run',
    Type.Object({ name: Type.String({ maxLength: 64 }), args: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
    ({ name, args }) => {
      if (!names.has(name)) throw new HomeAgentError('HA_ERR_SEQ_NOT_FOUND', `there is no sequence named ${name}`);
      // As the seq plugin fails a run: a tool error whose detail starts with its code.
      if (args?.fail === 'step')
        throw new ToolError({
          reason: 'failed',
          detail: 'HA_ERR_SEQ_STEP_FAILED: in good night, timer_set (group remind) failed: no clock',
        });
      if (args?.fail === 'args') throw new ToolError({ reason: 'type', detail: 'HA_ERR_SEQ_ARGS: minutes must be an integer' });
      if (args?.fail === 'plain') throw new ToolError({ reason: 'failed', detail: 'the bulb does not answer' });
      return { ok: true, sequence: name, tier: 'act', groups: [], results: { got: args ?? {} } };
    },
  );
  h.method('seq.delete', Type.Object({ name: Type.String({ maxLength: 64 }) }), ({ name }) => {
    if (!names.delete(name)) throw new HomeAgentError('HA_ERR_SEQ_NOT_FOUND', `there is no sequence named ${name}`);
    return { deleted: name };
  });

  t.match((await h.request({ method: 'GET', url: '/api/v1/sequences' })).json, {
    ok: true,
    result: { sequences: [{ name: 'good night' }] },
  });
  const ran = await h.request({
    method: 'POST',
    url: '/api/v1/sequences/good%20night/run',
    payload: { args: { minutes: 20 } },
    headers: { 'x-test-actor': 'webui:admin' },
  });
  t.match(ran.json, { ok: true, result: { sequence: 'good night', results: { got: { minutes: 20 } } } });
  t.match(h.calls.at(-1), { method: 'seq.run', params: { name: 'good night', args: { minutes: 20 } }, caller: { actor: 'webui:admin' } });
  const bare = await h.request({ method: 'POST', url: '/api/v1/sequences/good%20night/run', payload: {} });
  t.same(h.calls.at(-1)?.params, { name: 'good night' }, 'no args: the declared defaults apply');
  t.equal(bare.status, 200);

  const badArgs = await h.request({ method: 'POST', url: '/api/v1/sequences/good%20night/run', payload: { args: [1] } });
  t.equal(badArgs.status, 400);
  t.match(badArgs.json, { error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: /args must be a JSON object/ } });
  const unknownField = await h.request({ method: 'POST', url: '/api/v1/sequences/good%20night/run', payload: { name: 'x' } });
  t.equal(unknownField.status, 400, 'only args in the body');

  const step = await h.request({ method: 'POST', url: '/api/v1/sequences/good%20night/run', payload: { args: { fail: 'step' } } });
  t.match(
    step.json,
    { ok: false, error: { code: 'HA_ERR_SEQ_STEP_FAILED', message: 'in good night, timer_set (group remind) failed: no clock' } },
    "a failed step: the seq plugin's code and message, not an internal error",
  );
  const plain = await h.request({ method: 'POST', url: '/api/v1/sequences/good%20night/run', payload: { args: { fail: 'plain' } } });
  t.match(
    plain.json,
    { ok: false, error: { code: 'HA_ERR_TOOL_FAILED', message: 'the bulb does not answer' } },
    'a tool error without a code',
  );

  const wrongArgs = await h.request({ method: 'POST', url: '/api/v1/sequences/good%20night/run', payload: { args: { fail: 'args' } } });
  t.equal(wrongArgs.status, 400, "wrong arguments are the caller's: 400");
  t.match(wrongArgs.json, { error: { code: 'HA_ERR_SEQ_ARGS', message: 'minutes must be an integer' } });

  const missing = await h.request({ method: 'POST', url: '/api/v1/sequences/bedtime/run', payload: {} });
  t.equal(missing.status, 404);
  t.match(missing.json, { error: { code: 'HA_ERR_SEQ_NOT_FOUND' } });

  t.match((await h.request({ method: 'DELETE', url: '/api/v1/sequences/good%20night' })).json, {
    ok: true,
    result: { deleted: 'good night' },
  });
  t.same(names, new Set(), 'deleted');
  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/sequences/good%20night' })).status, 404, 'a second time: not found');
});
