/**
 * Chinese sentences for every intent of the local intent engine (issue 11): device control, states
 * and temperatures, light settings, time and date, timers, lists, media, vacuums, weather and small
 * talk. Matching is per character, so templates are written without spaces; `[的]` and `[一下]`
 * keep the many optional particles of spoken Chinese from multiplying the templates.
 *
 * Slot naming follows src/intent/sentences/en-assist.ts: {duration} is the timer's length,
 * {duration:start_duration} picks out a running timer, {timer_name:name} names one,
 * {list_name:name} is a to-do list and {volume:volume_level} the volume to set.
 */
import type { IntentSentences } from '../intent-sentences.js';

const PLEASE = '[(请|帮我|麻烦|给我)]';
const TURN_ON = '(打开|开启|开|启动)';
const TURN_OFF = '(关闭|关掉|关上|关)';
const ONCE = '[(一下|吧|一下吧)]';
const ALL = '[(所有|全部|所有的|全部的)]';

// Devices said by their kind: the domain (and a device class where Home Assistant needs one).
const DOMAIN_NOUNS: ReadonlyArray<{ noun: string; slots: Record<string, string> }> = [
  { noun: '(灯|灯光|电灯)', slots: { domain: 'light' } },
  { noun: '(风扇|电扇)', slots: { domain: 'fan', name: 'all' } },
  { noun: '开关', slots: { domain: 'switch', name: 'all' } },
  { noun: '(窗帘|窗户帘)', slots: { domain: 'cover', device_class: 'curtain', name: 'all' } },
  { noun: '(阀门|水阀)', slots: { domain: 'valve', name: 'all' } },
];

const onOffByDomain = (intent: 'HassTurnOn' | 'HassTurnOff', verb: string): IntentSentences[] =>
  DOMAIN_NOUNS.map(({ noun, slots }) => ({
    intent,
    language: 'zh',
    templates: [
      `${PLEASE}${verb}${ONCE}[({area}|{floor})][的]${ALL}${noun}`,
      `${PLEASE}把[({area}|{floor})][的]${ALL}${noun}${verb}${ONCE}`,
    ],
    slots,
  }));

const onOffByName = (intent: 'HassTurnOn' | 'HassTurnOff', verb: string): IntentSentences => ({
  intent,
  language: 'zh',
  templates: [`${PLEASE}${verb}${ONCE}[{area}[的]]{name}`, `${PLEASE}把[{area}[的]]{name}${verb}${ONCE}`],
});

const SET_TO = '(设置为|设置到|设置成|设为|调到|调成|调为|调节到|调节为|调整到|调整为|改成|改为|变成)';
const BRIGHTNESS = '[的]亮度';
const AREA_LIGHTS = '{area}[的](灯|灯光)';

// Timers said by the words people use for them; a running timer by length, name or area.
const TIMER_WORD = '(计时器|定时器|倒计时)';
const TIMER = `[(那个|这个)][({duration:start_duration}[的]|{area}[的]|{timer_name:name}[的])]${TIMER_WORD}`;

export const ZH_SENTENCES: IntentSentences[] = [
  // Named devices first: "卧室开关" is both a device's whole name and area + "开关"; the two tie
  // and the first declared wins, and the person who says a device's exact name means that device.
  onOffByName('HassTurnOn', TURN_ON),
  onOffByName('HassTurnOff', TURN_OFF),
  ...onOffByDomain('HassTurnOn', TURN_ON),
  ...onOffByDomain('HassTurnOff', TURN_OFF),
  {
    intent: 'HassTurnOn',
    language: 'zh',
    templates: [`${PLEASE}(激活|切换到|开启|启用|打开){name}场景`, `${PLEASE}(激活|切换到){name}`],
    slots: { domain: 'scene' },
  },
  {
    intent: 'HassTurnOn',
    language: 'zh',
    // A script's bare name runs it ("私密模式"); only names of scripts fit this domain.
    templates: [`${PLEASE}(运行|执行){name}[脚本]`, '{name}'],
    slots: { domain: 'script' },
  },
  {
    intent: 'HassTurnOff',
    language: 'zh',
    templates: [`${PLEASE}(锁上|锁好|锁){name}`, `${PLEASE}把{name}(锁上|锁好)`],
    slots: { domain: 'lock' },
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [
      `${PLEASE}把{name}${BRIGHTNESS}${SET_TO}{brightness}`,
      `${PLEASE}(设置|调节|调整){name}${BRIGHTNESS}(到|为){brightness}`,
      `{name}${BRIGHTNESS}${SET_TO}{brightness}`,
      `${PLEASE}把{name}${SET_TO}{brightness}`,
    ],
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [
      `${PLEASE}把${AREA_LIGHTS}${BRIGHTNESS}${SET_TO}{brightness}`,
      `${PLEASE}(设置|调节|调整)${AREA_LIGHTS}${BRIGHTNESS}(到|为){brightness}`,
      `{area}[的][(灯|灯光)]${BRIGHTNESS}${SET_TO}{brightness}`,
    ],
    slots: { name: 'all' },
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [`[把]{name}${BRIGHTNESS}${SET_TO}(最大|最亮)`],
    slots: { brightness: 100 },
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [`[把]{name}${BRIGHTNESS}${SET_TO}(最暗|最小|最低)`],
    slots: { brightness: 1 },
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [`[把]{area}[的][(灯|灯光)]${BRIGHTNESS}${SET_TO}(最大|最亮)`],
    slots: { brightness: 100, name: 'all' },
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [`[把]{area}[的][(灯|灯光)]${BRIGHTNESS}${SET_TO}(最暗|最小|最低)`],
    slots: { brightness: 1, name: 'all' },
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [`${PLEASE}[把]{name}[的颜色]${SET_TO}{color}`, '{name}[的颜色]{color}'],
  },
  {
    intent: 'HassLightSet',
    language: 'zh',
    templates: [`${PLEASE}[把]${AREA_LIGHTS}[的颜色]${SET_TO}{color}`],
    slots: { name: 'all' },
  },
  {
    intent: 'HassClimateGetTemperature',
    language: 'zh',
    templates: [
      '[(现在|当前)][({area}|{name})][(现在|当前)](温度|室温)[(是多少|多少|有多少|几度)]',
      '[(现在|当前)][({area}|{name})][(现在|当前)][是](多少度|几度)',
    ],
  },
  {
    intent: 'HassClimateSetTemperature',
    language: 'zh',
    templates: [
      `${PLEASE}把[({area}[的]|{name}[的])]温度${SET_TO}{temperature}`,
      `${PLEASE}把{name}${SET_TO}{temperature}`,
      `[({area}[的]|{name}[的])]温度${SET_TO}{temperature}`,
    ],
  },
  {
    intent: 'HassGetState',
    language: 'zh',
    templates: ['{name}[现在](是多少|有多少|多少|是什么|怎么样|什么状态)'],
  },
  {
    intent: 'HassGetState',
    language: 'zh',
    templates: ['{name}(是不是开着|开着不|开着吗|开着没|是开着的吗|开了吗|开了没)'],
    slots: { state: 'on' },
  },
  ...DOMAIN_NOUNS.map(
    ({ noun, slots }): IntentSentences => ({
      intent: 'HassGetState',
      language: 'zh',
      templates: [
        `{area}(有|有没有)${noun}开着[(吗|没有)]`,
        `${ALL}${noun}(都开着吗|是不是都开着|都开着没)`,
        `(哪个|哪些|有几个|几个)${noun}[是]开着[的]`,
      ],
      slots: { domain: slots.domain ?? '', state: 'on' },
    }),
  ),
  {
    intent: 'HassGetCurrentTime',
    language: 'zh',
    templates: ['[现在]几点[(了|钟)]', '现在[的]时间[是多少]', '现在什么时间[了]'],
  },
  {
    intent: 'HassGetCurrentDate',
    language: 'zh',
    templates: ['今天(几号|是几号|是什么日子|星期几|是星期几|几月几号)[了]', '今天的日期[是什么]'],
  },
  {
    intent: 'HassNevermind',
    language: 'zh',
    templates: ['(没关系|没事儿|没事了|没事|算了|再见|闭嘴|退下|不用了)[吧]'],
  },
  {
    intent: 'HassRespond',
    language: 'zh',
    templates: ['(你好|嗨)[(小助手|助手)]', '你能做什么', '我可以说什么', '谁(做|创造|开发)了你'],
  },
  {
    intent: 'HassStartTimer',
    language: 'zh',
    templates: [
      `${PLEASE}(设置|设|定|开始|开|启动)[一个]{duration}[的]${TIMER_WORD}[(叫|叫做|名叫){timer_name:name}]`,
      `${PLEASE}(设置|设|定)[一个]${TIMER_WORD}{duration}`,
      '{duration}(计时器|倒计时)',
      '(计时|倒计时){duration}',
      '{duration}(后|以后|之后){message:conversation_command}',
    ],
  },
  { intent: 'HassCancelTimer', language: 'zh', templates: [`${PLEASE}(取消|停止|关掉|删除)${TIMER}`] },
  {
    intent: 'HassCancelAllTimers',
    language: 'zh',
    templates: [`${PLEASE}(取消|停止|关掉|删除)[{area}[的]](所有|全部)[的]${TIMER_WORD}`],
  },
  { intent: 'HassPauseTimer', language: 'zh', templates: [`${PLEASE}暂停${TIMER}`] },
  { intent: 'HassUnpauseTimer', language: 'zh', templates: [`${PLEASE}(继续|恢复)${TIMER}`] },
  {
    intent: 'HassIncreaseTimer',
    language: 'zh',
    templates: [`${PLEASE}(给|把)${TIMER}(加|增加|延长)[上]{duration}`],
  },
  {
    intent: 'HassDecreaseTimer',
    language: 'zh',
    templates: [`${PLEASE}(给|把)${TIMER}(减|减少|缩短|减去)[掉]{duration}`],
  },
  {
    intent: 'HassTimerStatus',
    language: 'zh',
    templates: [`${TIMER}(还剩多少时间|还剩多久|还有多久|还剩多少)`, '还剩多少时间', '还有多久'],
  },
  {
    intent: 'HassBroadcast',
    language: 'zh',
    templates: ['(广播|通知大家|告诉大家){message}'],
  },
  {
    intent: 'HassShoppingListAddItem',
    language: 'zh',
    templates: ['[请]把{item}(加到|加入|添加到|放到|放进)购物(清单|单|列表)[(里|中|上)]', '购物(清单|单|列表)[里](加|加上|添加){item}'],
  },
  {
    intent: 'HassShoppingListCompleteItem',
    language: 'zh',
    templates: ['[请]把{item}从购物(清单|单|列表)[(里|中|上)](删掉|删除|划掉|勾掉|去掉)'],
  },
  {
    intent: 'HassListAddItem',
    language: 'zh',
    templates: ['[请]把{item}(加到|加入|添加到|放到|放进){list_name:name}[(清单|列表)][(里|中|上)]'],
  },
  {
    intent: 'HassListCompleteItem',
    language: 'zh',
    templates: ['[请]把{item}从{list_name:name}[(清单|列表)][(里|中|上)](删掉|删除|划掉|勾掉|去掉)'],
  },
  {
    intent: 'HassMediaPause',
    language: 'zh',
    templates: ['[({area}[的]|{name})]暂停[(播放|音乐|一下)]', '[把]{name}暂停'],
  },
  {
    intent: 'HassMediaUnpause',
    language: 'zh',
    templates: ['[({area}[的]|{name})](继续|恢复)[(播放|音乐)]'],
  },
  {
    intent: 'HassMediaNext',
    language: 'zh',
    templates: ['[({area}[的]|{name})](下一首|下一曲|下一个|跳过|切歌)[(歌|歌曲)]'],
  },
  {
    intent: 'HassMediaPrevious',
    language: 'zh',
    templates: ['[({area}[的]|{name})](上一首|上一曲|上一个)[(歌|歌曲)]'],
  },
  {
    intent: 'HassSetVolume',
    language: 'zh',
    templates: [`[把][({area}[的]|{name}[的])]音量${SET_TO}{volume:volume_level}`],
  },
  {
    intent: 'HassMediaSearchAndPlay',
    language: 'zh',
    templates: ['[在({area}|{name})]播放{search_query}', '[在({area}|{name})]放[一(首|个|部)]{search_query}'],
  },
  {
    intent: 'HassVacuumStart',
    language: 'zh',
    templates: [`${PLEASE}[让]{name}(开始打扫|开始扫地|开始清扫|打扫|扫地)`, `${PLEASE}(打扫|清扫)[一下]({area}|{floor})`],
  },
  {
    intent: 'HassVacuumReturnToBase',
    language: 'zh',
    templates: [`${PLEASE}[让]{name}(回去充电|回充|回到基座|返回基座|回家)`],
  },
  {
    intent: 'HassGetWeather',
    language: 'zh',
    templates: ['[(今天|现在)][{name}[的]][(今天|现在)]天气(怎么样|如何|好吗|好不好)'],
  },
];
