import t from 'tap';
import { escapeParam, escapeText, parseCq, toCq, toSegments, unescapeCq } from '../../../../plugins/onebot/cq-code.js';
import { mapMessage as mapEvent, parseConversation } from '../../../../plugins/onebot/event-mapper.js';
import type { OneBotEvent } from '../../../../plugins/onebot/protocol.js';
import { splitText } from '../../../../plugins/onebot/text-split.js';
import { fixture, SELF_ID } from '../../../helpers/onebot-peer.js';

const mapMessage = (event: Record<string, unknown>, selfId: number) => mapEvent(event as OneBotEvent, selfId);

t.test('CQ codes parse into segments, with escapes undone', async (t) => {
  t.same(parseCq('hi [CQ:at,qq=123] a&#91;b&#93; &amp; [CQ:image,file=x.jpg,url=https://h/p?a=1&#44;2]'), [
    { type: 'text', data: { text: 'hi ' } },
    { type: 'at', data: { qq: '123' } },
    { type: 'text', data: { text: ' a[b] & ' } },
    { type: 'image', data: { file: 'x.jpg', url: 'https://h/p?a=1,2' } },
  ]);
  t.same(parseCq('[CQ:face,id=14]'), [{ type: 'face', data: { id: '14' } }]);
  t.same(parseCq(''), []);
});

t.test('escaping follows the spec: & [ ] in text, and , in parameters', async (t) => {
  t.equal(escapeText('a&b[c],d'), 'a&amp;b&#91;c&#93;,d');
  t.equal(escapeParam('a&b[c],d'), 'a&amp;b&#91;c&#93;&#44;d');
  t.equal(unescapeCq('&amp;#91;'), '&#91;', 'an escaped escape comes back literally');
});

t.test('segments round-trip through the CQ string form', async (t) => {
  const segments = [
    { type: 'reply', data: { id: '-2094475820' } },
    { type: 'text', data: { text: 'price [USD] 5,6 & more &#91;' } },
    { type: 'at', data: { qq: 'all' } },
    { type: 'image', data: { file: 'base64://AAA=', url: 'https://x/y?a=1,b=[2]' } },
  ];
  t.same(parseCq(toCq(segments)), segments);
  const text = 'plain & [odd] text, with commas';
  t.equal(toCq(parseCq(escapeText(text))), escapeText(text));
});

t.test('array messages become string-valued segments; junk items are skipped', async (t) => {
  t.same(toSegments([{ type: 'at', data: { qq: 123 } }, null, { data: {} }, { type: 'text', data: { text: 'x' } }]), [
    { type: 'at', data: { qq: '123' } },
    { type: 'text', data: { text: 'x' } },
  ]);
  t.same(toSegments(42), []);
});

t.test('a group message maps to text without the bot mention and with other mentions by name', async (t) => {
  const mapped = mapMessage(fixture('group-message-at'), SELF_ID);
  t.match(mapped, {
    type: 'group',
    conversation: 'qq:group:20002002',
    user_id: 10001002,
    group_id: 20002002,
    message_id: -2094475820,
    sender_name: '儿子',
    mentioned: true,
    text: '帮 @妈妈 查一下明天的天气',
  });
  const plain = mapMessage(fixture('group-message-no-at'), SELF_ID);
  t.equal(plain?.mentioned, false);
  t.equal(plain?.text, '今晚吃什么[笑]', 'string-format messages are parsed and unescaped');
  const privateMessage = mapMessage(fixture('private-message'), SELF_ID);
  t.match(privateMessage, {
    type: 'private',
    conversation: 'qq:private:10001001',
    mentioned: true,
    text: '客厅的灯开着吗？',
    sender_name: '妈妈',
  });
  const picture = mapMessage(
    fixture('private-message', {
      message: '看[CQ:image,file=abc.jpg,url=https://multimedia.nt.qq.com.cn/download?appid=1406&amp;fileid=x]',
    }),
    SELF_ID,
  );
  t.same(picture?.images, ['https://multimedia.nt.qq.com.cn/download?appid=1406&fileid=x']);
  t.equal(picture?.text, '看[picture]');
  t.equal(mapMessage(fixture('heartbeat'), SELF_ID), undefined);
  t.equal(mapMessage(fixture('private-message', { user_id: 'x', sender: {} }), SELF_ID), undefined);
});

t.test('conversations parse back to targets', async (t) => {
  t.same(parseConversation('qq:group:20002002'), { type: 'group', id: 20002002 });
  t.same(parseConversation('qq:private:10001001'), { type: 'private', id: 10001001 });
  t.equal(parseConversation('cli'), undefined);
  t.equal(parseConversation('qq:group:12; drop'), undefined);
});

t.test('long text splits at a paragraph, then sentence boundary, in order', async (t) => {
  const paragraph = 'a'.repeat(60);
  const text = `${paragraph}\n\n${paragraph}\n\n${paragraph}`;
  const parts = splitText(text, 130);
  t.same(parts, [`${paragraph}\n\n${paragraph}`, paragraph]);
  const sentences = '这是第一句话。这是第二句话。这是第三句话。';
  t.same(splitText(sentences, 15), ['这是第一句话。这是第二句话。', '这是第三句话。']);
  const english = 'One two three. Four five six. Seven eight nine.';
  t.same(splitText(english, 20), ['One two three.', 'Four five six.', 'Seven eight nine.']);
  const hard = 'x'.repeat(25);
  t.same(splitText(hard, 10), ['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  t.same(splitText('short', 4000), ['short']);
  t.equal(splitText(`${'y'.repeat(9)}😀z`, 10)[0], 'y'.repeat(9), 'a surrogate pair is not cut');
  for (const part of splitText('word '.repeat(3000), 4000)) t.ok(part.length <= 4000);
});
