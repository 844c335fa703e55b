import t from 'tap';
import { newStageContext } from '../../../../src/agent/agent.js';
import { OWNER } from '../../../helpers/senders.js';
import { processFixture } from './fixtures/process-fixture.js';

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4]).toString('base64');

t.test('a process plugin gets no media store, and its stage hooks see pictures only as notes', async (t) => {
  const f = processFixture(t, {
    source: `
export default (ctx) => ({
  async start() {
    const probe = (what, fn) => { try { fn(); return what + ' allowed'; } catch (e) { return what + ' ' + e.code; } };
    await ctx.io.injectInput({ channel: 'probe', payload: [
      probe('put', () => ctx.media.put(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))),
      probe('read', () => ctx.media.read('0'.repeat(64))),
    ].join('; ') });
    ctx.stages.register('before_output', (sc) => { sc.extra.seen = JSON.stringify(sc.messages); });
  },
  async stop() {},
});
`,
  });
  const probed = f.harness.nextInjected();
  await f.plugin.start(new AbortController().signal);
  t.equal((await probed).input.payload, 'put HA_ERR_PLUGIN_PERMISSION; read HA_ERR_PLUGIN_PERMISSION');

  const input = {
    id: 'i1',
    source: 'cli',
    channel: 'cli',
    sender: OWNER,
    type: 'text' as const,
    payload: 'hi',
    meta: {},
    received_at: 0,
    level: 0 as const,
  };
  const context = { ...newStageContext('t1', input), stage: 'before_output' as const };
  context.messages = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Picture(s) from snap:' },
        { type: 'image', mime: 'image/jpeg', data: JPEG, digest: 'c'.repeat(64) },
      ],
    },
  ];
  await f.stages.run('before_output', context);
  const seen = String(context.extra.seen);
  t.notMatch(seen, JPEG, 'no base64 crossed to the child');
  t.match(seen, 'pictures are not sent to external plugins; it is stored as media cccccccccccc');
  t.equal(typeof context.messages[0]?.content, 'object', 'the daemon’s own messages keep the picture');
});
