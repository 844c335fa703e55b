/**
 * `homeagentctl voice [status] | say TEXT… [--language en|zh] | listen | activations [--limit N] | satellites`:
 * the voice plugin's control methods. Whoever looks after the box over SSH checks here why the
 * microphone or speaker is quiet, tests the speaker with an announcement, reads the activation
 * log to tune false triggers, and sees which satellite in which room is connected.
 */
import type {
  ActivationEntry,
  SatelliteStatus,
  VoiceActivationsResult,
  VoiceListenResult,
  VoiceSatellitesResult,
  VoiceSayResult,
} from '../api/voice.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
import { table } from './format.js';

/** homeagentctl's option table entries for voice (merged into its parseArgs options; --limit is shared). */
export const VOICE_OPTIONS = {
  language: { type: 'string' },
  limit: { type: 'string' },
} as const;

export type VoiceFlags = { language?: string | undefined; limit?: string | undefined };

export type VoiceCommand =
  | { command: 'status' }
  | { command: 'say'; text: string; language?: 'en' | 'zh' }
  | { command: 'listen' }
  | { command: 'activations'; limit?: number }
  | { command: 'satellites' };

export class VoiceUsageError extends CommandUsageError {}

/** `homeagentctl voice` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const voiceCommand = defineCommand<VoiceFlags>({
  name: 'voice',
  options: VOICE_OPTIONS,
  usage: [
    {
      synopsis: 'voice [status]',
      about: 'microphone, voice activity, speech-to-text, speech, speaker and activation, with why a part is off',
      zh: '麦克风、语音活动检测、语音识别、语音合成、扬声器和唤醒，并说明哪部分为何关闭',
    },
    { synopsis: 'voice say TEXT... [--language en|zh]', about: 'speak an announcement on the speaker', zh: '在扬声器上播报一条通知' },
    {
      synopsis: 'voice listen',
      about: 'take the next utterance as a command (as a push-to-talk press)',
      zh: '把下一句话当作命令（如同按下按键说话）',
    },
    {
      synopsis: 'voice activations [--limit N]',
      about: 'wake phrases, wake words and button presses heard, accepted or not (for tuning)',
      zh: '听到的唤醒短语、唤醒词和按键，接受与否都记（用于调校）',
    },
    {
      synopsis: 'voice satellites',
      about: 'the Wyoming satellites: room, connection (and why not), last turn',
      zh: 'Wyoming 卫星：房间、连接（或为何未连接）、上一轮对话',
    },
  ],
  parse: (args, flags) => {
    const command = parseVoiceCommand(args, flags);
    return (context) => runVoice(command, context);
  },
});

const ALLOWED: Record<VoiceCommand['command'], ReadonlyArray<keyof VoiceFlags>> = {
  status: [],
  say: ['language'],
  listen: [],
  activations: ['limit'],
  satellites: [],
};
const MAX_LIMIT = 10_000;

export function voiceFlagsUsed(flags: VoiceFlags): Array<keyof VoiceFlags> {
  return (Object.keys(VOICE_OPTIONS) as Array<keyof VoiceFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `voice [<sub> …]` (positionals after `voice`); no sub-command means status. Throws VoiceUsageError. */
export function parseVoiceCommand(positionals: readonly string[], flags: VoiceFlags): VoiceCommand {
  const [sub = 'status', ...rest] = positionals;
  if (!Object.hasOwn(ALLOWED, sub))
    throw new VoiceUsageError(
      `unknown voice command ${sub}; use status, say, listen, activations or satellites`,
      `未知的 voice 子命令 ${sub}；可用 status、say、listen、activations 或 satellites`,
    );
  const command = sub as VoiceCommand['command'];
  const stray = voiceFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0)
    throw new VoiceUsageError(`--${stray[0]} does not belong to voice ${command}`, `--${stray[0]} 不属于 voice ${command}`);
  switch (command) {
    case 'say': {
      const text = rest.join(' ').trim();
      if (text === '')
        throw new VoiceUsageError(
          'voice say needs a TEXT, e.g. voice say dinner is ready',
          'voice say 需要一段 TEXT，例如 voice say 开饭了',
        );
      if (flags.language === undefined) return { command, text };
      if (flags.language !== 'en' && flags.language !== 'zh') {
        throw new VoiceUsageError(
          `--language must be en or zh, not ${JSON.stringify(flags.language)}`,
          `--language 须为 en 或 zh，而不是 ${JSON.stringify(flags.language)}`,
        );
      }
      return { command, text, language: flags.language };
    }
    case 'activations': {
      if (rest.length > 0)
        throw new VoiceUsageError('voice activations takes no arguments (--limit N)', 'voice activations 不接受参数（用 --limit N）');
      if (flags.limit === undefined) return { command };
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        throw new VoiceUsageError(
          `--limit must be a whole number from 1 to ${MAX_LIMIT}, not ${JSON.stringify(flags.limit)}`,
          `--limit 须为 1 到 ${MAX_LIMIT} 之间的整数，而不是 ${JSON.stringify(flags.limit)}`,
        );
      }
      return { command, limit };
    }
    default:
      if (rest.length > 0) throw new VoiceUsageError(`voice ${command} takes no arguments`, `voice ${command} 不接受参数`);
      return { command };
  }
}

export async function runVoice(command: VoiceCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  const w = WORDS[language];
  return withDaemon(options, { plugin: 'voice' }, async ({ call, print }) => {
    switch (command.command) {
      case 'status':
        return print((await call('voice.status', {})) as Record<string, unknown>, formatVoiceStatus);
      case 'say': {
        const params = command.language === undefined ? { text: command.text } : { text: command.text, language: command.language };
        return print((await call('voice.say', params)) as VoiceSayResult, (r) =>
          r.played ? w.spoken : r.stopped ? w.stopped : w.notPlayed,
        );
      }
      case 'listen':
        return print((await call('voice.listen', {})) as VoiceListenResult, (r) => (r.armed ? w.listening : w.notListening(r.reason)));
      case 'activations': {
        const params = command.limit === undefined ? {} : { limit: command.limit };
        return print((await call('voice.activations', params)) as VoiceActivationsResult, (r) =>
          formatActivations(r.activations, language),
        );
      }
      case 'satellites':
        return print((await call('voice.satellites', {})) as VoiceSatellitesResult, (r) => formatSatellites(r.satellites, language));
    }
  });
}

/** Every sentence the voice command prints, in both languages (the status parts are the plugin's own words). */
const WORDS = {
  en: {
    spoken: 'spoken',
    stopped: 'stopped before the end (barge-in)',
    notPlayed: 'not played',
    listening: 'listening: say the command now',
    notListening: (reason: string | undefined) => `not listening: ${reason ?? 'refused'}`,
    none: 'no activations recorded (plugin.voice.activation.log_entries 0 keeps none)',
    yes: 'yes',
    no: (reason: string) => `no: ${reason}`,
    header: ['AT', 'METHOD', 'ACCEPTED', 'SCORE', 'HEARD'],
    noSatellites: 'no satellites configured (plugin.voice.satellites.list)',
    satelliteHeader: ['ID', 'ROOM', 'STATE', 'LAST SEEN', 'LAST TURN'],
    states: { connecting: 'connecting', connected: 'connected', failed: 'failed', stopped: 'stopped' },
    outcomes: { command: 'command', nothing: 'nothing understood', timeout: 'timed out', refused: 'refused', error: 'error' },
    retry: (at: string) => `retry ${at}`,
    never: 'never',
  },
  zh: {
    spoken: '已播报',
    stopped: '播报中途停止（被打断）',
    notPlayed: '没有播放',
    listening: '正在听：现在说出指令',
    notListening: (reason: string | undefined) => `没有在听：${reason ?? '被拒绝'}`,
    none: '没有记录到唤醒（plugin.voice.activation.log_entries 为 0 时不记录）',
    yes: '是',
    no: (reason: string) => `否：${reason}`,
    header: ['时间', '方式', '接受', '分数', '听到'],
    noSatellites: '没有配置语音卫星（plugin.voice.satellites.list）',
    satelliteHeader: ['ID', '房间', '状态', '最后联系', '最近一轮'],
    states: { connecting: '正在连接', connected: '已连接', failed: '连接失败', stopped: '已停止' },
    outcomes: { command: '指令', nothing: '没听懂', timeout: '超时', refused: '被拒绝', error: '出错' },
    retry: (at: string) => `重试 ${at}`,
    never: '从未',
  },
} as const;
/** One line per part: "microphone  state=recording restarts=0 …"; nested values as compact JSON. */
export function formatVoiceStatus(status: Record<string, unknown>): string {
  const rows = Object.entries(status).map(([part, value]) => [part, describe(value)]);
  return table(rows, '');
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(' ');
}

export function formatActivations(entries: ActivationEntry[], language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (entries.length === 0) return w.none;
  const rows = entries.map((e) => [
    e.at,
    e.method,
    e.accepted ? w.yes : w.no(e.reason ?? ''),
    e.score === undefined ? '' : e.score.toFixed(2),
    e.heard ?? e.phrase ?? e.model ?? '',
  ]);
  return table([[...w.header], ...rows], '');
}

/** One row per satellite; under the table, why each one that is not connected is not, and when it tries again. */
export function formatSatellites(satellites: SatelliteStatus[], language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (satellites.length === 0) return w.noSatellites;
  const rows = satellites.map((s) => {
    const turn = s.last_turn;
    const lastTurn = turn ? `${turn.at} ${w.outcomes[turn.outcome]}${turn.heard ? `: ${turn.heard}` : ''}` : '';
    return [s.id, s.area, w.states[s.state], s.last_seen ?? w.never, lastTurn];
  });
  const problems = satellites.filter((s) => s.problem).map((s) => `${s.id}: ${s.problem}${s.retry_at ? ` (${w.retry(s.retry_at)})` : ''}`);
  return [table([[...w.satelliteHeader], ...rows], ''), ...problems].join('\n');
}
