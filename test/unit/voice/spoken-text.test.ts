import t from 'tap';
import { speakableText, spokenLanguage } from '../../../plugins/voice/spoken-text.js';

t.test('spokenLanguage: Han characters against Latin words', async (t) => {
  t.equal(spokenLanguage('把 Kitchen Light 打开了'), 'zh', 'an English device name in a Chinese sentence');
  t.equal(spokenLanguage('客厅的灯已经打开了。'), 'zh');
  t.equal(spokenLanguage('The kitchen light is on.'), 'en');
  t.equal(spokenLanguage('Turn on the 客厅 light please'), 'en', 'a Chinese room name in an English sentence');
  t.equal(spokenLanguage('打开 Kitchen Light'), 'zh', 'a tie goes to Chinese');
  t.equal(spokenLanguage('打开 Living Room Lamp'), 'en', 'more Latin words than Han characters');
  t.equal(spokenLanguage('21 °C, 45 %'), 'en', 'no words at all');
  t.equal(spokenLanguage(''), 'en');
});

t.test('speakableText: Markdown becomes speech', async (t) => {
  t.equal(speakableText('**Done.** The *kitchen* light is ~~off~~ on.', 200), 'Done. The kitchen light is off on.');
  t.equal(speakableText('See [the manual](https://example.com/manual) or <https://example.org/x>.', 200), 'See the manual or example.org.');
  t.equal(speakableText('Check `sensor.kitchen_temp` and my_light_1.', 200), 'Check sensor.kitchen_temp and my_light_1.');
  t.equal(
    speakableText('# Lights\n\n- Kitchen: on\n- Hall: off\n1. first\n2) second', 200),
    'Lights. Kitchen: on. Hall: off. first. second.',
  );
  t.equal(speakableText('Run this:\n```sh\nrm -rf /tmp/x\n```\nthen wait.', 200), 'Run this: (code omitted) then wait.');
  t.equal(speakableText('运行：\n```\nls\n```\n就好了。', 200), '运行：（代码略）就好了。', 'Chinese answers say it in Chinese');
  t.equal(speakableText('| Room | Temp |\n|---|---:|\n| Kitchen | 21 |\n| Hall | 19 |', 200), 'Room, Temp. Kitchen, 21. Hall, 19.');
  t.equal(speakableText('> quoted *text*\n\n---\n\nend', 200), 'quoted text end');
  t.equal(speakableText('an unclosed block\n```\ncode to the end', 200), 'an unclosed block (code omitted)');
  t.equal(speakableText('客厅的灯\n已经打开了。', 200), '客厅的灯已经打开了。', 'no space between Han characters across a line break');
  t.equal(speakableText('Docs at https://example.com/a/b?c=1, then restart.', 200), 'Docs at example.com, then restart.');
  t.equal(speakableText('*not emphasis* 2 * 3 * 4 and **bold _word_**', 200), 'not emphasis 2 * 3 * 4 and bold word');
  t.equal(speakableText('  lots   of\n\n\n  space\t here  ', 200), 'lots of space here');
});

t.test('speakableText: a long text is cut at the last sentence end that fits', async (t) => {
  const en = 'The light is on. The door is locked. The heating is at 21.5 degrees now.';
  t.equal(speakableText(en, 40), 'The light is on. The door is locked.');
  t.equal(speakableText(en, 15), 'The light is', 'no sentence end fits: the last space');
  t.equal(speakableText('It is 21.5 degrees in the kitchen and rising', 20), 'It is 21.5 degrees', 'a decimal point is not a sentence end');
  const zh = '客厅的灯已经打开了。卧室的空调设为二十六度！前门锁好了吗？';
  t.equal(speakableText(zh, 25), '客厅的灯已经打开了。卧室的空调设为二十六度！');
  t.equal(speakableText(zh, 12), '客厅的灯已经打开了。');
  t.equal(speakableText('客厅的灯已经打开了', 4), '客厅的灯', 'no sentence end or space: a character boundary');
  t.equal(speakableText(en, 500), en, 'short enough: unchanged');
});

t.test('speakableText never splits a surrogate pair', async (t) => {
  const text = `ab${'😀'.repeat(5)}`;
  for (let max = 3; max <= 8; max += 1) {
    const spoken = speakableText(text, max);
    t.ok(spoken.length <= max, `${max}: within the limit`);
    t.notOk(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(spoken),
      `${max}: no lone surrogate (${JSON.stringify(spoken)})`,
    );
  }
  t.equal(speakableText(text, 3), 'ab');
  t.equal(speakableText(text, 4), 'ab😀');
});
