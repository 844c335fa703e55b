/**
 * The words of the compositional recogniser (issue 26), per language: what each word or phrase
 * contributes to a sentence's meaning — an action, a particle ("on", "off"), a kind of device, a
 * question form, a keyword naming a thing the home has (timer, list, weather), politeness and
 * filler that carry nothing, and markers that a sentence is not a command (past time, "why",
 * opinions, negation). The home's own names are added per home by the mention finder; this file is
 * only the language. Phrases are written normalised (lowercase, no punctuation); English ones are
 * matched word by word after stemming, Chinese ones character by character.
 */

/** What a sentence asks to be done; the schema (intent-schema.ts) turns an action and a target into an intent. */
export type Action =
  | 'on'
  | 'off'
  | 'toggle'
  | 'open'
  | 'close'
  | 'lock'
  | 'unlock'
  | 'start'
  | 'stop'
  | 'pause'
  | 'resume'
  | 'next'
  | 'previous'
  | 'set'
  | 'raise'
  | 'lower'
  | 'add'
  | 'complete'
  | 'cancel'
  | 'dock'
  | 'clean'
  | 'activate'
  | 'tell';

/** A kind of device as a word says it: a domain and, where the word says it, a device class. */
export interface DeviceWord {
  domains: readonly string[];
  device_class?: string;
}

export type Keyword =
  | 'timer'
  | 'list'
  | 'time'
  | 'date'
  | 'weather'
  | 'temperature'
  | 'humidity'
  | 'volume'
  | 'brightness'
  | 'color'
  | 'position'
  | 'song'
  | 'today'
  | 'home'
  | 'left';

export type Question = 'yes_no' | 'which' | 'how_many' | 'what';

export type Meaning =
  | { t: 'action'; action: Action }
  /** A verb whose action its particle decides ("turn … on", "power … down"). */
  | { t: 'verb'; verb: string }
  | { t: 'particle'; particle: 'on' | 'off' | 'up' | 'down' }
  | { t: 'device'; device: DeviceWord }
  | { t: 'keyword'; keyword: Keyword }
  | { t: 'question'; question: Question }
  | { t: 'state'; state: string }
  /** "all", "every", "所有", "都": the whole of what is named, not one of it. */
  | { t: 'all' }
  /** "it", "them", "它": the conversation's last target. */
  | { t: 'it' }
  /** "too", "also", "还有", "也": a follow-up adding to the last command. */
  | { t: 'also' }
  | { t: 'and' }
  /** "make sure", "确保": the state said after it is wanted, not asked about. */
  | { t: 'ensure' }
  /** Where one command ends and the next begins ("and then", "然后"). */
  | { t: 'break' }
  /** A sentence with one of these is talk about the home, not a command (see the module comment). */
  | {
      t: 'block';
      why:
        | 'past'
        | 'why'
        | 'opinion'
        | 'negation'
        | 'statement'
        | 'howto'
        | 'chat'
        | 'condition'
        | 'except'
        | 'complaint'
        | 'later'
        | 'correction';
    }
  /** "can you …", "能帮我…吗": a request put as a question; with an action it asks for the action. */
  | { t: 'request' }
  /** "a bit", "slightly", "开一点点": some of the way, an amount nobody said. */
  | { t: 'partial' }
  | { t: 'filler' };

export interface Lexicon {
  phrases: ReadonlyArray<readonly [string, Meaning]>;
  /** Words joining two commands ("and then", "然后"); the composer splits there. */
  clauseBreaks: readonly string[];
}

const a = (action: Action): Meaning => ({ t: 'action', action });
const d = (domains: string[], device_class?: string): Meaning => ({
  t: 'device',
  device: device_class === undefined ? { domains } : { domains, device_class },
});
const k = (keyword: Keyword): Meaning => ({ t: 'keyword', keyword });
const q = (question: Question): Meaning => ({ t: 'question', question });
const s = (state: string): Meaning => ({ t: 'state', state });
const b = (why: Extract<Meaning, { t: 'block' }>['why']): Meaning => ({ t: 'block', why });
const F: Meaning = { t: 'filler' };
const many = (words: string, meaning: Meaning): Array<[string, Meaning]> => words.split('|').map((w) => [w, meaning]);

const EN: Lexicon = {
  clauseBreaks: ['and then', 'then', 'and also', 'and', 'after that', 'plus'],
  phrases: [
    ...many('turn|switch|power|put|flip|shut|get|set it|leave|heat|heat up|warm up|cool down|bump|crank|knock', {
      t: 'verb',
      verb: 'turn',
    }),
    ['on', { t: 'particle', particle: 'on' }],
    ['off', { t: 'particle', particle: 'off' }],
    ['up', { t: 'particle', particle: 'up' }],
    ['down', { t: 'particle', particle: 'down' }],
    ...many('kill|deactivate|disable|cut', a('off')),
    ...many('enable|light up', a('on')),
    ...many('toggle|flip', a('toggle')),
    ...many('open|pull up|open up|lift', a('open')),
    ...many('close|draw|shut|pull down|close up', a('close')),
    ...many('lock|secure|bolt', a('lock')),
    ...many('unlock|unbolt', a('unlock')),
    ...many('start|run|begin|launch|boil|go|going|execute|fire up', a('start')),
    ...many('stop|halt|end', a('stop')),
    ...many('pause|hold|freeze', a('pause')),
    ...many('resume|unpause|continue|carry on|keep playing|restart', a('resume')),
    ...many('skip|next', a('next')),
    ...many('previous|go back|back a|last song|prior', a('previous')),
    ...many('set|change|make|adjust|put it|move|bring|turn it to', a('set')),
    ...many('make sure|make sure that|ensure|ensure that|be sure', { t: 'ensure' }),
    // "I want the desk lamp on", "I'd like the fan turned off": the state wished for is wanted.
    ...many('i want|id like|i would like|i need|i wanna|we want|we need', { t: 'ensure' }),
    // "check if the back door is locked", "tell me if …": a question put as a request (not a condition).
    ...many(
      'check|check if|check whether|check that|see if|tell me if|tell me whether|find out if|let me know if|can you check|can you check if|could you check if|can you see if|could you see if|can you check whether',
      q('yes_no'),
    ),
    ...many('brighten|increase|raise|louder|warmer|higher|turn up', a('raise')),
    ...many('dim|decrease|lower|reduce|quieter|darker|cooler|turn down', a('lower')),
    ...many('add|put|append|include', a('add')),
    ...many('check off|mark|cross off|tick off|complete|remove|take off', a('complete')),
    ...many('cancel|delete|clear|get rid of|kill', a('cancel')),
    ...many(
      'dock|go home|send home|return|back to base|back to the dock|go back to|recharge|back to its dock|back to its base|back to the base|back to its charger|back to the charger|to the charger|to its charger|charge',
      a('dock'),
    ),
    ...many('clean|vacuum|hoover|clean up|sweep', a('clean')),
    ...many('activate|trigger', a('activate')),
    ...many('tell me|give me|show me|say|read|report', a('tell')),
    ...many('light|lights|lamp|lamps|lighting|bulb|bulbs|ceiling light|spotlight', d(['light'])),
    ...many('switch|switches|plug|plugs|outlet|socket', d(['switch'])),
    ...many('fan|fans', d(['fan'])),
    ...many('blind|blinds', d(['cover'], 'blind')),
    ...many('curtain|curtains|drapes', d(['cover'], 'curtain')),
    ...many('shade|shades', d(['cover'], 'shade')),
    ...many('shutter|shutters', d(['cover'], 'shutter')),
    ...many('window|windows', d(['cover'], 'window')),
    ...many('garage door|garage doors|garage', d(['cover'], 'garage')),
    ...many('door|doors', d(['lock', 'cover', 'binary_sensor'], 'door')),
    ...many('lock|locks', d(['lock'])),
    ...many('tv|television|telly', d(['media_player'], 'tv')),
    ...many('speaker|speakers|music|media player|player|playback', d(['media_player'])),
    ...many('vacuum|robot|vacuum cleaner|robot vacuum', d(['vacuum'])),
    ...many('thermostat|heating|heater|ac|air conditioning|air conditioner|climate', d(['climate'])),
    ...many('scene', d(['scene'])),
    ...many('script|routine', d(['script'])),
    ...many('valve|valves|sprinkler|sprinklers', d(['valve'])),
    ...many('timer|timers|countdown|count down|time', k('timer')),
    ...many('list|shopping list|grocery list', k('list')),
    ...many('time|clock', k('time')),
    ...many('date|day|day of the week|weekday', k('date')),
    ...many('weather|forecast|sunny|rain|raining|snow|outside', k('weather')),
    ...many('temperature|temp|warm|hot|cold|degrees|degree|celsius', k('temperature')),
    ...many('humidity|humid', k('humidity')),
    ...many('volume|sound|loudness', k('volume')),
    ...many('brightness|bright', k('brightness')),
    ...many('color|colour', k('color')),
    ...many('position|halfway|way', k('position')),
    ...many('song|track|tune|one|music', k('song')),
    ...many('today|now|currently|right now|at the moment', k('today')),
    ...many('house|home|everywhere|anywhere|whole house', k('home')),
    ...many('left|remaining|goes off|go off|rings|ring|is done|be done|finishes', k('left')),
    ...many('is|are|was it|is it|did i|did we|have i|have we|did you|do i|is there|are there', q('yes_no')),
    ...many('which|what|whats|where|what is|what are|any|anything|is any|are any', q('which')),
    ...many('how many|how much|how long', q('how_many')),
    ...many('how|hows|how is|hows the|status|the status of|state of|or not', q('what')),
    ...many('locked', s('locked')),
    ...many('unlocked', s('unlocked')),
    ...many('opened|open', s('open')),
    ...many('closed|shut', s('closed')),
    ...many('still on', s('on')),
    ...many('running', s('on')),
    // The state wished for after a device ("I'd like the fan turned off"); "I turned off …" stays a story ("I").
    ...many('turned on|switched on', s('on')),
    ...many('turned off|switched off', s('off')),
    ...many('all|every|everything|each|all of the|all the', { t: 'all' }),
    ...many('it|them|that|those|this|these|its', { t: 'it' }),
    ...many('too|also|as well|again|now', { t: 'also' }),
    ...many('yesterday|last night|last week|ago|earlier|this morning|used to|before', b('past')),
    ...many('turned|switched|bought|forgot|broke|broken|made|making|happened|was|were|had|left it', b('past')),
    ...many('why|how come', b('why')),
    ...many('do you think|should|should i|would it|is it safe|safe|better|best|worth|love|hate|prefer|wonder|i wonder', b('opinion')),
    ...many('dont|do not|never|dont turn|dont switch', b('negation')),
    ...many('i|my kids|my mum|my mom|we|they|he|she|mum|mom|kids', b('statement')),
    // "we're leaving" is said "were leaving": who is going, not the past.
    // (Words are matched after their -ing is cut where the verb is known: "leaving" is "leave", "going" "go".)
    ...many(
      'were leave|were leaving|were off|were go|were going|were heading|were heading out|were out|were back|were home|were go out',
      b('statement'),
    ),
    ...many('how do|how does|explain|what is a|what is an|work|works|invented|invent|who', b('howto')),
    ...many('joke|poem|story|hello|hi|thanks|thank you|good morning|good night|capital|hey|weird|noise|noisy|loud|stuck', b('chat')),
    // Someone other than the house did it, or it lasted a while: a story about the home, not a request.
    ...many('somebody|someone|all night|all day|overnight|already|when did|when was|when were', b('past')),
    ...many('think|thinking', b('opinion')),
    // "the lights are too bright": a complaint; beside a command ("too hot, turn on the fan") it is the reason.
    // "turn the tv off, no wait, leave it on": the speaker took it back; nothing said is sure any more.
    ...many(
      'no wait|wait no|actually no|actually never mind|scratch that|forget that|no no|oh no wait|no sorry|sorry no|i mean',
      b('correction'),
    ),
    ...many(
      'too dim|too bright|too dark|too loud|too quiet|too hot|too cold|too warm|too long|too high|too low|too much|too many',
      b('complaint'),
    ),
    ...many('a bit|a little|a little bit|slightly|partway|partially|part of the way', { t: 'partial' }),
    ...many(
      'can you|could you|would you|will you|can you please|could you please|would you please|would you mind|do you mind|kindly|can i have|could i have|can i get|could i get|may i have|if you could|if you would|if you can|if you dont mind|if you wouldnt mind|would it be possible to|is it possible to|do me a favour and|do me a favor and',
      { t: 'request' },
    ),
    // A condition or an exception is an automation or a rule, not a command to do now ("if it gets
    // dark …", "all the lights except the kitchen": acting on the rest would need what is excepted).
    ...many('if|unless|as soon as|when i|when we|when it|whenever', b('condition')),
    // A schedule is an automation, not a command for now ("every night turn off the lights").
    ...many(
      'every night|every morning|every evening|every day|every weekday|each night|each morning|on weekdays|at weekends',
      b('condition'),
    ),
    // Later is not now: a deferred command needs a timer or an automation ("turn off the lights later").
    ...many(
      'later|later on|in a bit|in a while|tomorrow|tonight|this evening|this afternoon|at noon|at midnight|at sunset|at sunrise',
      b('later'),
    ),
    // An offer to do it oneself is no request to the house ("do you want me to turn off the tv").
    ...many('want me to|do you want me to|would you like me to|shall i|should we|shall we|let me', b('opinion')),
    ...many('except|apart from|other than|but not|besides|not the', b('except')),
    ...many(
      // "can I have the kettle on", "do you know what time it is": a request put as a question about the speaker.
      'can i have|could i have|can i get|could i get|can we have|could we have|may i have|do you know|never mind|nevermind|alright|all right|first|still|play|playing|until|till|got|have we got|you got|going to|gonna|im going to|sleep|asleep|sleeping|bed|please|could you|can you|would you|will you|would you mind|do you mind|mind|could|can|would|will|you|for me|send|the|a|an|my|our|your|in|at|of|to|into|for|from|with|here|in here|there|just|kindly|hey|ok|okay|so|quickly|right|um|uh|like to|want|need|lets|let|let the|be|to be|go ahead and|some|bit|little|more|percent|per cent|of my|tell|going to be|to be|like|it is|at',
      F,
    ),
  ],
};

const ZH: Lexicon = {
  clauseBreaks: ['然后再', '然后', '接着', '之后', '再把', '并且', '并把', '同时', '顺便', '以及', '并', '再', '，', '、'],
  phrases: [
    ...many('打开|开启|开开|开一下|开了|开|点亮|亮一下|亮起|弄亮|启用|通电', a('on')),
    ...many('关掉|关闭|关上|关了|关一下|关|熄灭|熄了|熄|灭了|断电|停用', a('off')),
    ...many('切换|反转', a('toggle')),
    ...many('拉开|升起|升上去|掀开', a('open')),
    ...many('拉上|合上|放下|降下|落下', a('close')),
    ...many('锁上|锁好|锁了|锁一下|上锁|锁住|锁门|锁', a('lock')),
    ...many('确保|一定要', { t: 'ensure' }),
    ...many('解锁|开锁|打开锁|把锁打开', a('unlock')),
    ...many('启动|开始|运行|执行|开动|烧|工作', a('start')),
    ...many('停止|停下|停了|停掉|停', a('stop')),
    ...many('暂停|先停|停一下', a('pause')),
    ...many('继续|恢复|接着放|接着|继续放|继续播放|重新开始', a('resume')),
    ...many('下一首|下一曲|下首|切歌|换一首|换首|跳过', a('next')),
    ...many('上一首|上一曲|上首', a('previous')),
    ...many(
      '调到|调成|调为|调至|设为|设成|设置为|设置成|设置|设定|设到|设|改成|改为|换成|换个|换|变成|变为|变|弄成|定|调|开到|放到|拉到',
      a('set'),
    ),
    ...many('降到|升到|降至|升至|调低到|调高到|提高到|降低到|减到', a('set')),
    ...many('调亮|调高|调大|亮一点|高一点|大一点|加大|升高|提高|增加|加', a('raise')),
    ...many('调暗|调低|调小|暗一点|低一点|小一点|降低|减小|减少|减', a('lower')),
    ...many('加到|加上|添加|加入|放进|放到|记上|记一下|记下|加', a('add')),
    ...many('划掉|勾掉|删掉|删除|去掉|已经买了|买了|买好了|买到了|买回来了|完成', a('complete')),
    ...many('取消|不要计时|撤销|清除|停止计时', a('cancel')),
    ...many('回充|回去充电|充电|回基座|回座|返回|回家|回去', a('dock')),
    ...many('扫地|打扫|清扫|扫一下地|扫一扫|拖地|吸尘', a('clean')),
    ...many('激活|切换到|进入', a('activate')),
    ...many('告诉我|说一下|报一下|说说|播报|查一下|查查|看看|看一下|看下|帮我看看|看|查', a('tell')),
    ...many('灯|灯光|电灯|照明|灯泡|吸顶灯|射灯|灯带', d(['light'])),
    ...many('插座|开关', d(['switch'])),
    ...many('风扇|电扇|电风扇|排风扇', d(['fan'])),
    ...many('窗帘|帘子|纱帘', d(['cover'], 'curtain')),
    ...many('百叶窗|卷帘', d(['cover'], 'blind')),
    ...many('窗户|窗', d(['cover'], 'window')),
    ...many('车库门|卷帘门', d(['cover'], 'garage')),
    ...many('门', d(['lock', 'cover', 'binary_sensor'], 'door')),
    ...many('门锁|锁', d(['lock'])),
    ...many('电视|电视机', d(['media_player'], 'tv')),
    ...many('音箱|音响|播放器|音乐', d(['media_player'])),
    ...many('扫地机|扫地机器人|吸尘器|机器人', d(['vacuum'])),
    ...many('空调|暖气|地暖|温控器|冷气', d(['climate'])),
    ...many('场景|模式', d(['scene', 'script'])),
    ...many('阀门|水阀|喷淋', d(['valve'])),
    ...many('计时器|计时|倒计时|倒数|定时器|定时|闹钟计时|定个时', k('timer')),
    ...many('清单|列表|购物清单|购物单', k('list')),
    ...many('几点|几点钟|时间|钟点|几点了|几点几分|几分了', k('time')),
    ...many('几号|几月几号|日期|星期几|礼拜几|周几|哪一天|哪天|几月几日', k('date')),
    ...many('天气|天气预报|下雨|下雪|晴天|晴|刮风|外面|外边|户外|室外', k('weather')),
    ...many('温度|几度|多少度|气温|热不热|冷不冷|热|冷', k('temperature')),
    ...many('湿度|潮不潮|潮湿|干不干|潮', k('humidity')),
    ...many('音量|声音', k('volume')),
    ...many('亮度', k('brightness')),
    ...many('颜色', k('color')),
    ...many('位置|开合度|一半', k('position')),
    ...many('首歌|歌|这首|曲子|音乐', k('song')),
    ...many('今天|现在|目前|当前|此刻', k('today')),
    ...many('家里|全屋|整个家|全家|家中', k('home')),
    ...many('还剩|剩|剩下|还有多久|还有多长时间|多久|多长时间|结束|到点', k('left')),
    ...many('结束计时|结束倒计时', a('cancel')),
    ...many('吗|么|嘛|是不是|有没有|了没有|了没|没有|是否|是吗|没', q('yes_no')),
    ...many('哪些|哪个|哪几个|哪|什么|还是', q('which')),
    ...many('几个|几盏|多少|几', q('how_many')),
    ...many('怎么样|如何|咋样|好吗|好不好', q('what')),
    ...many('锁着|锁了|锁好|锁上了', s('locked')),
    ...many('没锁|没有锁|未锁|开着锁', s('unlocked')),
    ...many('开着|亮着|开着的|亮的|还开着|还亮着', s('on')),
    ...many('关着|灭了|关着的', s('off')),
    ...many('所有|全部|全都|都|全|每个|每一个|一切|统统', { t: 'all' }),
    ...many('它|它们|这个|那个|他|她|这些|那些', { t: 'it' }),
    ...many('还有|也|再|又', { t: 'also' }),
    ...many('昨天|昨晚|前天|上周|上个月|去年|刚才|以前|之前|总是|老是|一直|经常|每次', b('past')),
    ...many('为什么|为啥|怎么会|干嘛', b('why')),
    ...many('你觉得|觉得|认为|安全吗|安全|好看|值得|值不值|喜欢|讨厌|比较好|哪种|买', b('opinion')),
    ...many('不要|别|不用开|不准|不许|不想', b('negation')),
    ...many('我妈|我爸|女儿|儿子|老公|老婆|外婆|外公|姥爷|孩子们|孩子|他们|我们|有点响|响|坏了|卡住|漏水', b('statement')),
    ...many('怎么工作|是怎么|怎么|原理|是什么|是谁|发明|影响', b('howto')),
    ...many('笑话|诗|你好|谢谢|早上好|晚安啊|首都|讲个|写一首|越来越', b('chat')),
    // Who did it, or that it is done already: a story about the home, not a request.
    ...many('已经|刚刚|早就|一整夜|整晚|一晚上|一下午|一上午|一整天|一天了|半天了|好几天|好久', b('past')),
    ...many('谁', b('howto')),
    ...many('想一想|想想|想一下', b('chat')),
    // 条件和例外是规则或自动化，不是现在就做的命令（“如果天黑了就…”，“除了厨房…”）。
    ...many('如果|要是|假如|一旦|等我|等你|等到|的时候', b('condition')),
    ...many('每天|每晚|每天晚上|每天早上|每周|每个周末|工作日', b('condition')),
    ...many('晚点|晚一点|待会|待会儿|一会儿|一会|等会|等会儿|等一下再|过一会|明天|明早|今晚|今天晚上|后天|中午|半夜', b('later')),
    // Going out or coming home is who moves, not a door ("我们出门了，锁一下前门").
    ...many('出门|出门了|要出门|出去|回来了|到家了|到家', b('statement')),
    ...many('要我|要不要我|我来|我去', b('opinion')),
    ...many('除了|以外|之外', b('except')),
    ...many('不对|等等|不不|说错了|哦不对|不是不是', b('correction')),
    // "厨房的灯太亮了": a complaint; beside a command ("太热了，开空调") it is the reason.
    ...many('太亮|太暗|太吵|太响|太热|太冷|太多|太久|太高|太低|太大|太小', b('complaint')),
    ...many('一点点|一些|稍微|一小半', { t: 'partial' }),
    ...many(
      '请|请你|麻烦|麻烦你|帮我|帮忙|替我|能|能不能|可以|可不可以|能否|你能|你可以|好吗|好不好|行吗|行不行|可以吗|好么|成吗|能帮我|可以帮我',
      {
        t: 'request',
      },
    ),
    ...many(
      '有|请|请你|麻烦|麻烦你|帮我|帮忙|给我|替我|把|将|让|给|的|了|吧|啊|呀|呢|哦|嗯|啦|喽|嘞|咯|哈|会|一下|一点|一点儿|下|好|好了|里|里面|上|中|这里|这边|这儿|那边|在|往|从|为|到|个|我|你|能|能不能|可以|可不可以|想|要|我要|我想|需要|是|现在把|现在|先|马上|立刻|快|就|那|一个|一|下吧|拿|设个|定个|来|去|得|着|都给|过来|记得|个小|点|帮忙把',
      F,
    ),
  ],
};

/** The clause breaks as phrases too, so the mention finder marks them; "和" and "and" also join targets. */
function withBreaks(lexicon: Lexicon, joins: string): Lexicon {
  return {
    ...lexicon,
    phrases: [...lexicon.phrases, ...lexicon.clauseBreaks.map((w): [string, Meaning] => [w, { t: 'break' }]), ...many(joins, { t: 'and' })],
  };
}

export const LEXICONS: Readonly<Record<'en' | 'zh', Lexicon>> = {
  en: withBreaks(EN, 'and|as well as|along with|plus'),
  zh: withBreaks(ZH, '和|跟|与|及|还有'),
};

/** Han characters that are not content: particles and measure words left over never lower confidence. */
export const ZH_LIGHT_CHARS = new Set([...'的了吧啊呀呢哦嗯么嘛个把将给请帮下一点里上这那在是我你啦喽嘞咯哈']);

/** English words that carry no meaning of their own (articles, prepositions, pronouns). */
export const EN_LIGHT_WORDS = new Set(
  'the a an to of in on at for from with my our your me us is are be it its this that and or please so just then now out'.split(' '),
);
