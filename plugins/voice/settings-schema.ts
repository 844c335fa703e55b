/**
 * The settings of the voice plugin, `plugin.voice.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<VoiceSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta, type SettingMeta } from '../../src/sdk/settings.js';

const voiceMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('voice', description, extra);
const NETWORK_HOST = { maxLength: 253, pattern: '^[A-Za-z0-9._:-]*$' };

const VoiceMicrophoneSchema = Type.Object(
  {
    device: Type.String({
      default: 'default',
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9_:,.=-]+$',
      ...voiceMeta('ALSA capture device (arecord -D): default, plughw:1,0, a name from asound.conf.', {
        description_zh: 'ALSA 录音设备（arecord -D）：default、plughw:1,0，或 asound.conf 里的名字。',
        requires_restart: true,
      }),
    }),
    sample_rate: Type.Union([Type.Literal(16000), Type.Literal(8000)], {
      default: 16000,
      ...voiceMeta('Capture rate in Hz; voice activity detection runs at this rate (Silero takes 16000 or 8000).', {
        description_zh: '采样率（Hz）；语音活动检测按这个采样率运行（Silero 接受 16000 或 8000）。',
        requires_restart: true,
      }),
    }),
    channels: Type.Integer({
      default: 1,
      minimum: 1,
      maximum: 2,
      ...voiceMeta('Channels captured; two are mixed down to one.', {
        description_zh: '录音声道数；两个声道会混成一个。',
        requires_restart: true,
      }),
    }),
    format: Type.Union([Type.Literal('S16_LE'), Type.Literal('S32_LE')], {
      default: 'S16_LE',
      ...voiceMeta('Sample format arecord is asked for; converted to 16-bit internally.', {
        description_zh: '让 arecord 使用的采样格式；内部转成 16 位。',
        requires_restart: true,
      }),
    }),
    restart_backoff_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 600000,
      ...voiceMeta('First wait before restarting a recorder that exited; doubles on each exit in a row.', {
        description_zh: '录音程序退出后，第一次重启前等多久；连续退出时每次翻倍。',
      }),
    }),
    restart_backoff_max_ms: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 3600000,
      ...voiceMeta('Longest wait between recorder restarts.', { description_zh: '两次重启录音程序之间最长等待多久。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceVadSchema = Type.Object(
  {
    threshold: Type.Number({
      default: 0.5,
      minimum: 0.05,
      maximum: 0.99,
      ...voiceMeta('Speech probability at which an utterance starts.', { description_zh: '语音概率达到这个值时，一句话开始。' }),
    }),
    negative_threshold: Type.Number({
      default: 0.35,
      minimum: 0.01,
      maximum: 0.95,
      ...voiceMeta('Speech probability under which silence is counted (hysteresis; below threshold).', {
        description_zh: '语音概率低于这个值时算作静音（滞回；要低于 threshold）。',
      }),
    }),
    min_speech_ms: Type.Integer({
      default: 250,
      minimum: 32,
      maximum: 5000,
      ...voiceMeta('Shorter bursts of speech are dropped as noise.', { description_zh: '更短的语音片段当作噪声丢弃。' }),
    }),
    min_silence_ms: Type.Integer({
      default: 500,
      minimum: 64,
      maximum: 5000,
      ...voiceMeta('Silence that ends an utterance.', { description_zh: '静音多久算一句话结束。' }),
    }),
    pre_roll_ms: Type.Integer({
      default: 300,
      minimum: 0,
      maximum: 2000,
      ...voiceMeta('Audio kept from before the speech started, so the first syllable is not cut.', {
        description_zh: '保留说话开始前的一段音频，免得第一个音节被切掉。',
      }),
    }),
    max_utterance_ms: Type.Integer({
      default: 15000,
      minimum: 1000,
      maximum: 60000,
      ...voiceMeta('An utterance is cut here even if speech goes on.', { description_zh: '一句话到这个长度就切断，即使还在说。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceActivationSchema = Type.Object(
  {
    wake_phrases: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      default: ['小宅', '你好小宅', '嘿小宅', 'hey home', 'hi home', 'ok home', 'hello home'],
      maxItems: 32,
      ...voiceMeta(
        'An utterance whose transcript starts with one of these is for HomeAgent (the phrase is removed before the command is understood). Empty: no wake phrase.',
        { description_zh: '转写结果以其中某个开头的话是对 HomeAgent 说的（理解命令前先去掉这个唤醒词）。留空：不用唤醒词。' },
      ),
    }),
    wake_phrase_with_cloud_stt: Type.Boolean({
      default: false,
      ...voiceMeta(
        'Allow wake phrases with the openai speech-to-text back end. Matching a phrase in the transcript sends every utterance heard in the room to that service, so it is off unless you say so.',
        {
          description_zh:
            '允许在 openai 语音转文字后端下使用唤醒词。要在转写结果里匹配唤醒词，房间里听到的每句话都会发给那个服务，所以除非你明确要求，否则关闭。',
        },
      ),
    }),
    push_to_talk_entity: Type.String({
      default: '',
      maxLength: 128,
      ...voiceMeta(
        'A button or binary sensor entity (e.g. binary_sensor.talk_button): turning on opens the microphone for one utterance, without a wake phrase. Empty: none.',
        {
          description_zh:
            '一个按钮或二元传感器实体（例如 binary_sensor.talk_button）：变为开时打开麦克风听一句话，不需要唤醒词。留空：不用。',
        },
      ),
    }),
    wake_word_model_dir: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta(
        'A directory with openWakeWord models (melspectrogram.onnx, embedding_model.onnx and one classifier *.onnx): a detected wake word opens the microphone for one utterance. Empty: none.',
        {
          description_zh:
            '放 openWakeWord 模型的目录（melspectrogram.onnx、embedding_model.onnx 和一个分类器 *.onnx）：检测到唤醒词就打开麦克风听一句话。留空：不用。',
          requires_restart: true,
        },
      ),
    }),
    wake_word_threshold: Type.Number({
      default: 0.5,
      minimum: 0.05,
      maximum: 0.99,
      ...voiceMeta('Wake word classifier score that counts as a detection.', { description_zh: '唤醒词分类器得分达到多少算检测到。' }),
    }),
    keyphrase: Type.String({
      default: 'hey home',
      maxLength: 64,
      pattern: "^[A-Za-z' ]*$",
      ...voiceMeta(
        "The local wake word: English words that pocketsphinx spots in the microphone's audio (Debian packages pocketsphinx and pocketsphinx-en-us); hearing it opens the microphone for one utterance. Empty: none.",
        {
          description_zh:
            '本地唤醒词：pocketsphinx 在麦克风音频里识别的英文单词（Debian 包 pocketsphinx 和 pocketsphinx-en-us）；听到它就打开麦克风听一句话。留空：不用。',
          requires_restart: true,
        },
      ),
    }),
    keyphrase_threshold: Type.Number({
      default: 1e-5,
      minimum: 1e-60,
      maximum: 1,
      ...voiceMeta(
        'pocketsphinx kws_threshold for the local wake word: lower hears the phrase more readily and more falsely (tuned by bench/wake-word.mjs).',
        {
          description_zh: '本地唤醒词的 pocketsphinx kws_threshold：越低越容易听到，也越容易误触发（用 bench/wake-word.mjs 调）。',
          requires_restart: true,
        },
      ),
    }),
    keyphrase_phone_loop_penalty: Type.Number({
      default: 1e-5,
      minimum: 1e-60,
      maximum: 1,
      ...voiceMeta('pocketsphinx kws_plp for the local wake word: lower lets the phrase win over other sounds more often.', {
        description_zh: '本地唤醒词的 pocketsphinx kws_plp：越低，唤醒词越常压过其他声音。',
        requires_restart: true,
      }),
    }),
    keyphrase_model_dir: Type.String({
      default: '/usr/share/pocketsphinx/model/en-us',
      minLength: 1,
      maxLength: 4096,
      ...voiceMeta('The pocketsphinx English model directory (en-us/ and cmudict-en-us.dict).', {
        description_zh: 'pocketsphinx 英文模型目录（en-us/ 和 cmudict-en-us.dict）。',
        requires_restart: true,
      }),
    }),
    keyphrase_restart_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 600000,
      ...voiceMeta('First wait before restarting a wake word spotter that exited; doubles on each exit in a row.', {
        description_zh: '唤醒词识别程序退出后，第一次重启前等多久；连续退出时每次翻倍。',
      }),
    }),
    keyphrase_restart_max_ms: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 3600000,
      ...voiceMeta('Longest wait between wake word spotter restarts.', { description_zh: '两次重启唤醒词识别程序之间最长等待多久。' }),
    }),
    listen_window_ms: Type.Integer({
      default: 8000,
      minimum: 1000,
      maximum: 60000,
      ...voiceMeta('After push-to-talk or a wake word: how long the next utterance may take to begin.', {
        description_zh: '按键说话或唤醒词之后：下一句话最迟多久开始。',
      }),
    }),
    refractory_ms: Type.Integer({
      default: 2000,
      minimum: 0,
      maximum: 60000,
      ...voiceMeta('After an activation, further triggers are ignored this long (one press or phrase, one turn).', {
        description_zh: '一次激活后，这段时间内的其他触发都忽略（按一次或说一次，只算一轮）。',
      }),
    }),
    log_entries: Type.Integer({
      default: 500,
      minimum: 0,
      maximum: 100000,
      ...voiceMeta('Activations and near misses kept in <data>/plugin-data/voice/activations.jsonl for tuning false triggers.', {
        description_zh: '在 <data>/plugin-data/voice/activations.jsonl 里保留多少条激活和差点激活的记录，用来调整误触发。',
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceSttSchema = Type.Object(
  {
    backend: Type.Union(
      [
        Type.Literal('auto'),
        Type.Literal('local'),
        Type.Literal('none'),
        Type.Literal('wyoming'),
        Type.Literal('openai'),
        Type.Literal('command'),
      ],
      {
        default: 'auto',
        ...voiceMeta(
          'Speech-to-text: local (offline recognition of home commands with pocketsphinx, English), wyoming (a faster-whisper or whisper.cpp Wyoming server on the LAN), openai (POST /v1/audio/transcriptions), command (a program that reads a WAV and prints the text). auto: local when pocketsphinx and its English model are installed, else none. none: the microphone stays closed.',
          {
            description_zh:
              '语音转文字：local（用 pocketsphinx 离线识别家居指令，英文）、wyoming（局域网里的 faster-whisper 或 whisper.cpp Wyoming 服务器）、openai（POST /v1/audio/transcriptions）、command（读取 WAV 并打印文字的程序）。auto：装了 pocketsphinx 和英文模型时用 local，否则 none。none：麦克风保持关闭。',
          },
        ),
      },
    ),
    fallback_backend: Type.Union([Type.Literal('none'), Type.Literal('wyoming'), Type.Literal('openai'), Type.Literal('command')], {
      default: 'none',
      ...voiceMeta(
        'With the local back end: where an utterance goes that is no home command it knows (wyoming, openai or command, with their settings below). none: HomeAgent answers "I only understand home commands offline".',
        {
          description_zh:
            '使用 local 后端时：它不认识的、不是家居指令的话交给哪个后端（wyoming、openai 或 command，用下面它们的设置）。none：HomeAgent 回答“离线时我只听得懂家居指令”。',
        },
      ),
    }),
    local_model_dir: Type.String({
      default: '/usr/share/pocketsphinx/model/en-us',
      minLength: 1,
      maxLength: 4096,
      ...voiceMeta(
        "The pocketsphinx model of the local back end: a directory with the acoustic model (mdef, feat.params; in it or in a directory inside it, like Debian's en-us/) and a pronunciation dictionary (*.dict, cmudict-en-us.dict first).",
        {
          description_zh:
            'local 后端的 pocketsphinx 模型：一个目录，里面（或其中一个子目录里，比如 Debian 的 en-us/）有声学模型（mdef、feat.params），还有发音词典（*.dict，优先 cmudict-en-us.dict）。',
          requires_restart: true,
        },
      ),
    }),
    local_grammar_delay_ms: Type.Integer({
      default: 3000,
      minimum: 100,
      maximum: 600000,
      ...voiceMeta("Quiet time after the last change of the home's devices before the local command grammar is rebuilt.", {
        description_zh: '家里的设备最后一次变动后，等多久再重建本地指令语法。',
      }),
    }),
    local_max_alternatives: Type.Integer({
      default: 2,
      minimum: 1,
      maximum: 1000,
      ...voiceMeta(
        'The local command grammar keeps this many options of each written choice of the intent sentences ("in|on|at|…", "please|can you|…"; names and numbers are never cut): fewer ways to say a command, fewer ways to mishear one (tuned by bench/voice-commands.mjs on its tuning set).',
        {
          description_zh:
            '本地指令语法对意图句子里每处可选写法只保留前这么多个（“in|on|at|…”、“please|can you|…”；名字和数字从不删减）：说法越少，听错的可能越少（用 bench/voice-commands.mjs 的调参集调）。',
        },
      ),
    }),
    local_max_templates_per_group: Type.Integer({
      default: 3,
      minimum: 1,
      maximum: 1000,
      ...voiceMeta(
        'The local command grammar keeps the first this many sentence templates of each intent group (the common forms come first).',
        {
          description_zh: '本地指令语法对每组意图句子只保留前这么多个模板（常用的说法排在前面）。',
        },
      ),
    }),
    local_max_grammar_states: Type.Integer({
      default: 200000,
      minimum: 100,
      maximum: 5000000,
      ...voiceMeta(
        'Largest local command grammar (states of its automaton); a bigger home is refused with a status line rather than loaded.',
        {
          description_zh: '本地指令语法最大多少个状态；更大的家会被拒绝并给出状态说明，而不是加载。',
        },
      ),
    }),
    language: Type.Union([Type.Literal('auto'), Type.Literal('zh'), Type.Literal('en')], {
      default: 'auto',
      ...voiceMeta('Language hint given to the back end; auto lets it decide.', {
        description_zh: '给后端的语言提示；auto 让它自己判断。',
      }),
    }),
    timeout_ms: Type.Integer({
      default: 30000,
      minimum: 1000,
      maximum: 300000,
      ...voiceMeta('A transcription that takes longer is given up.', { description_zh: '转写超过这个时间就放弃。' }),
    }),
    wyoming_host: Type.String({
      default: '',
      ...NETWORK_HOST,
      ...voiceMeta('Wyoming speech-to-text server host.', { description_zh: 'Wyoming 语音转文字服务器的主机。' }),
    }),
    wyoming_port: Type.Integer({
      default: 10300,
      minimum: 1,
      maximum: 65535,
      ...voiceMeta('Wyoming speech-to-text server port.', { description_zh: 'Wyoming 语音转文字服务器的端口。' }),
    }),
    openai_base_url: Type.String({
      default: '',
      maxLength: 2048,
      ...voiceMeta(
        'Base URL of an OpenAI-compatible API (…/v1), e.g. https://api.openai.com/v1 or a server on the LAN. Not taken from core.llm: audio goes only where you send it.',
        {
          description_zh:
            '兼容 OpenAI 的 API 的 base URL（…/v1），例如 https://api.openai.com/v1 或局域网里的服务器。不沿用 core.llm：音频只发到你指定的地方。',
        },
      ),
    }),
    openai_api_key: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('API key (empty: none, for a server on the LAN).', {
        description_zh: 'API key（留空：不用，适合局域网里的服务器）。',
        secret: true,
      }),
    }),
    openai_model: Type.String({
      default: 'whisper-1',
      minLength: 1,
      maxLength: 256,
      ...voiceMeta('Transcription model.', { description_zh: '转写模型。' }),
    }),
    command: Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), {
      default: [],
      maxItems: 64,
      ...voiceMeta(
        'Program and arguments, run without a shell; {wav} is replaced by the utterance WAV file and {language} by the language hint. It prints the text on standard output.',
        {
          description_zh:
            '程序及参数，不经过 shell 运行；{wav} 替换为这句话的 WAV 文件，{language} 替换为语言提示。程序把文字打印到标准输出。',
        },
      ),
    }),
    max_output_chars: Type.Integer({
      default: 4000,
      minimum: 16,
      maximum: 100000,
      ...voiceMeta('Longest transcript accepted.', { description_zh: '接受的转写结果最长多少个字符。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

const VoiceTtsSchema = Type.Object(
  {
    backend: Type.Union([Type.Literal('espeak'), Type.Literal('piper'), Type.Literal('wyoming'), Type.Literal('openai')], {
      default: 'espeak',
      ...voiceMeta(
        'Text-to-speech: espeak (espeak-ng, Chinese and English), piper (the piper program), wyoming (a Piper Wyoming server), openai (POST /v1/audio/speech).',
        {
          description_zh:
            '文字转语音：espeak（espeak-ng，中英文）、piper（piper 程序）、wyoming（Piper Wyoming 服务器）、openai（POST /v1/audio/speech）。',
        },
      ),
    }),
    fallback_to_espeak: Type.Boolean({
      default: true,
      ...voiceMeta('When the chosen back end fails, speak with espeak-ng instead of staying silent.', {
        description_zh: '选定的后端失败时，改用 espeak-ng 说，而不是不出声。',
      }),
    }),
    max_chars: Type.Integer({
      default: 2000,
      minimum: 10,
      maximum: 20000,
      ...voiceMeta('Longer texts are cut at a sentence end before speaking.', { description_zh: '更长的文字在说之前从句末截断。' }),
    }),
    timeout_ms: Type.Integer({
      default: 10000,
      minimum: 500,
      maximum: 120000,
      ...voiceMeta('A synthesis that takes longer is given up.', { description_zh: '合成超过这个时间就放弃。' }),
    }),
    espeak_voice_en: Type.String({
      default: 'en-us',
      pattern: '^[A-Za-z0-9_+-]{1,32}$',
      ...voiceMeta('espeak-ng voice for English.', { description_zh: '英文用的 espeak-ng 声音。' }),
    }),
    espeak_voice_zh: Type.String({
      default: 'cmn',
      pattern: '^[A-Za-z0-9_+-]{1,32}$',
      ...voiceMeta('espeak-ng voice for Chinese.', { description_zh: '中文用的 espeak-ng 声音。' }),
    }),
    espeak_rate: Type.Integer({
      default: 175,
      minimum: 80,
      maximum: 450,
      ...voiceMeta('espeak-ng words per minute.', { description_zh: 'espeak-ng 语速（每分钟词数）。' }),
    }),
    piper_program: Type.String({
      default: 'piper',
      minLength: 1,
      maxLength: 4096,
      ...voiceMeta('The piper program (a name on PATH or an absolute path).', {
        description_zh: 'piper 程序（PATH 里的名字或绝对路径）。',
      }),
    }),
    piper_model_en: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('Piper voice model (.onnx) for English; empty: espeak-ng speaks English.', {
        description_zh: '英文的 Piper 声音模型（.onnx）；留空：由 espeak-ng 说英文。',
      }),
    }),
    piper_model_zh: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('Piper voice model (.onnx) for Chinese; empty: espeak-ng speaks Chinese.', {
        description_zh: '中文的 Piper 声音模型（.onnx）；留空：由 espeak-ng 说中文。',
      }),
    }),
    wyoming_host: Type.String({
      default: '',
      ...NETWORK_HOST,
      ...voiceMeta('Wyoming text-to-speech server host.', { description_zh: 'Wyoming 文字转语音服务器的主机。' }),
    }),
    wyoming_port: Type.Integer({
      default: 10200,
      minimum: 1,
      maximum: 65535,
      ...voiceMeta('Wyoming text-to-speech server port.', { description_zh: 'Wyoming 文字转语音服务器的端口。' }),
    }),
    wyoming_voice: Type.String({
      default: '',
      maxLength: 128,
      ...voiceMeta('Voice name asked of the Wyoming server; empty: its default.', {
        description_zh: '向 Wyoming 服务器请求的声音名；留空：用它的默认声音。',
      }),
    }),
    openai_base_url: Type.String({
      default: '',
      maxLength: 2048,
      ...voiceMeta(
        'Base URL of an OpenAI-compatible API (…/v1), e.g. https://api.openai.com/v1 or a server on the LAN. Not taken from core.llm: audio goes only where you send it.',
        {
          description_zh:
            '兼容 OpenAI 的 API 的 base URL（…/v1），例如 https://api.openai.com/v1 或局域网里的服务器。不沿用 core.llm：音频只发到你指定的地方。',
        },
      ),
    }),
    openai_api_key: Type.String({
      default: '',
      maxLength: 4096,
      ...voiceMeta('API key (empty: none, for a server on the LAN).', {
        description_zh: 'API key（留空：不用，适合局域网里的服务器）。',
        secret: true,
      }),
    }),
    openai_model: Type.String({
      default: 'tts-1',
      minLength: 1,
      maxLength: 256,
      ...voiceMeta('Speech model.', { description_zh: '语音合成模型。' }),
    }),
    openai_voice: Type.String({
      default: 'alloy',
      minLength: 1,
      maxLength: 64,
      ...voiceMeta('Voice name.', { description_zh: '声音名。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

/** One Wyoming satellite (wyoming-satellite on a Pi Zero 2 W, an ESP32 box): its microphone and speaker in a room. */
const VoiceSatelliteSchema = Type.Object(
  {
    id: Type.String({
      pattern: '^[a-z][a-z0-9_]{0,21}$',
      description: 'Short id (kitchen): its conversation and output channel are satellite_<id>.',
    }),
    name: Type.String({ default: '', maxLength: 64, description: 'How it is shown ("Kitchen satellite"); empty: the id.' }),
    host: Type.String({ minLength: 1, ...NETWORK_HOST, description: 'Host or address of its Wyoming server.' }),
    port: Type.Integer({
      default: 10700,
      minimum: 1,
      maximum: 65535,
      description: 'Port of its Wyoming server (wyoming-satellite: 10700).',
    }),
    area: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The area (room) it is in: "turn on the light" said to it means this room’s light.',
    }),
  },
  { additionalProperties: false },
);

const VoiceSatellitesSchema = Type.Object(
  {
    list: Type.Array(VoiceSatelliteSchema, {
      default: [],
      maxItems: 16,
      ...voiceMeta(
        'Wyoming satellites HomeAgent connects to, each {id, name, host, port, area}: wake detections and audio from one are a turn in its area, and the answer plays on it.',
        {
          description_zh:
            'HomeAgent 要连接的 Wyoming 卫星，每个为 {id, name, host, port, area}：卫星上的唤醒和音频在它所在的区域里算一轮对话，回答也在它上面播放。',
        },
      ),
    }),
    reconnect_min_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 600000,
      ...voiceMeta('First wait before connecting again to a satellite that dropped or refused; doubles on each failure in a row.', {
        description_zh: '卫星断开或拒绝连接后，第一次重连前等多久；连续失败时每次翻倍。',
      }),
    }),
    reconnect_max_ms: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 3600000,
      ...voiceMeta('Longest wait between connection attempts to a satellite.', { description_zh: '两次连接卫星之间最长等待多久。' }),
    }),
    connect_timeout_ms: Type.Integer({
      default: 5000,
      minimum: 500,
      maximum: 120000,
      ...voiceMeta('A satellite must accept the connection and describe itself within this.', {
        description_zh: '卫星必须在这段时间内接受连接并回复自己的信息。',
      }),
    }),
    ping_interval_ms: Type.Integer({
      default: 5000,
      minimum: 500,
      maximum: 600000,
      ...voiceMeta('How often a connected satellite is pinged, so a dead one is noticed.', {
        description_zh: '多久向已连接的卫星发一次 ping，以便发现失联的卫星。',
      }),
    }),
    pong_timeout_ms: Type.Integer({
      default: 5000,
      minimum: 200,
      maximum: 600000,
      ...voiceMeta('A satellite that does not answer a ping within this is disconnected and connected again.', {
        description_zh: '卫星在这段时间内不回应 ping，就断开并重新连接。',
      }),
    }),
    turn_timeout_ms: Type.Integer({
      default: 20000,
      minimum: 1000,
      maximum: 120000,
      ...voiceMeta('After a satellite heard its wake word: how long its audio may stream before a command must have ended.', {
        description_zh: '卫星听到唤醒词之后：音频最多能传多久，这之前命令必须说完。',
      }),
    }),
    max_payload_bytes: Type.Integer({
      default: 262144,
      minimum: 4096,
      maximum: 10485760,
      ...voiceMeta('Largest Wyoming message payload accepted from a satellite (an audio chunk); larger breaks the connection.', {
        description_zh: '从卫星接受的 Wyoming 消息体最大多少字节（一块音频）；更大的会断开连接。',
      }),
    }),
    play_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 500,
      maximum: 600000,
      ...voiceMeta('After the answer’s audio was sent, how much longer than its length the satellite may take to report it played.', {
        description_zh: '回答的音频发出后，卫星最多可以比音频长度多用多久来报告播放完毕。',
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('voice'),
    channel: Type.String({
      default: 'voice',
      pattern: '^[A-Za-z0-9_:.-]{1,64}$',
      ...voiceMeta('The conversation spoken commands belong to.', { description_zh: '语音命令所属的对话。', requires_restart: true }),
    }),
    area: Type.String({
      default: '',
      maxLength: 64,
      ...voiceMeta('The area (room) the microphone is in: "turn on the light" means this room’s light.', {
        description_zh: '麦克风所在的区域（房间）："开灯"指的是这个房间的灯。',
      }),
    }),
    wyoming_max_payload_bytes: Type.Integer({
      default: 10485760,
      minimum: 65536,
      maximum: 104857600,
      ...voiceMeta('Largest Wyoming message payload accepted from a server.', {
        description_zh: '从服务器接受的 Wyoming 消息体最大多少字节。',
      }),
    }),
    microphone: VoiceMicrophoneSchema,
    vad: VoiceVadSchema,
    activation: VoiceActivationSchema,
    stt: VoiceSttSchema,
    tts: VoiceTtsSchema,
    satellites: VoiceSatellitesSchema,
    speaker_enabled: Type.Boolean({
      default: true,
      ...voiceMeta('Offer the speaker output channel (announcements, spoken answers).', {
        description_zh: '提供扬声器输出通道（广播、语音回答）。',
        requires_restart: true,
      }),
    }),
    speaker_device: Type.String({
      default: 'default',
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9_:,.=-]+$',
      ...voiceMeta('ALSA playback device (aplay -D).', { description_zh: 'ALSA 播放设备（aplay -D）。' }),
    }),
    speaker_timeout_ms: Type.Integer({
      default: 120000,
      minimum: 1000,
      maximum: 1800000,
      ...voiceMeta('Longest playback; longer is stopped.', { description_zh: '最长播放时间；更长的会被停止。' }),
    }),
    barge_in: Type.Boolean({
      default: true,
      ...voiceMeta('Speech heard while HomeAgent is speaking stops the playback and the answer still being written.', {
        description_zh: 'HomeAgent 说话时听到有人说话，就停止播放，也停止还在生成的回答。',
      }),
    }),
    stream_speech: Type.Boolean({
      default: true,
      ...voiceMeta(
        'Speak each finished sentence of an answer while the model is still writing the rest; off: speak the whole answer at the end.',
        { description_zh: '模型还在写后面内容时，就把写完的每句话先说出来；关闭：等整个回答写完再说。' },
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type VoiceSettings = Static<typeof settingsSchema>;
