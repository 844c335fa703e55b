/**
 * The words several homeagentctl commands print in the terminal's language (cli-language.ts):
 * the language a run speaks, ages ("5m ago" / "5分钟前"), durations, and the daemon's state words
 * (running, stopped, quarantined …). Each command keeps its own sentences in a WORDS table of its
 * own, as health.ts does; only what they share lives here, so a state reads the same in `status`,
 * `plugins` and `automations`. The daemon's values stay as they are in --json.
 */
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';

/** The language a command prints in: the one homeagentctl was handed, else the terminal's. */
export function runLanguage(options: { language?: Language | undefined }): Language {
  return options.language ?? cliLanguage();
}

/** Days, hours, minutes and seconds of `seconds`, the zero ones left out (seconds always shown). */
function durationParts(seconds: number): Array<[number, 'd' | 'h' | 'm' | 's']> {
  const parts: Array<[number, 'd' | 'h' | 'm' | 's']> = [
    [Math.floor(seconds / 86400), 'd'],
    [Math.floor((seconds % 86400) / 3600), 'h'],
    [Math.floor((seconds % 3600) / 60), 'm'],
  ];
  return [...parts.filter(([n]) => n > 0), [seconds % 60, 's']];
}

const UNITS: Record<Language, Record<'d' | 'h' | 'm' | 's', string>> = {
  en: { d: 'd', h: 'h', m: 'm', s: 's' },
  zh: { d: '天', h: '小时', m: '分', s: '秒' },
};

function joinParts(parts: ReadonlyArray<[number, 'd' | 'h' | 'm' | 's']>, language: Language): string {
  return parts.map(([n, unit]) => `${n}${UNITS[language][unit]}`).join(language === 'zh' ? '' : ' ');
}

/** `2d 3h 4m 5s` in English (as format.ts's duration), `2天3小时4分5秒` in Chinese. */
export function durationIn(seconds: number, language: Language): string {
  return joinParts(durationParts(seconds), language);
}

/** How long ago `at` was, the two largest units: "2d 3h ago", "just now"; "2天3小时前", "刚刚". */
export function agoIn(at: number, now: number, language: Language): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 5) return language === 'zh' ? '刚刚' : 'just now';
  // Only the two largest units: "2d 3h ago" reads better than "2d 3h 4m 5s ago".
  const parts = joinParts(
    durationParts(seconds)
      .filter(([n, unit]) => !(n === 0 && unit === 's'))
      .slice(0, 2),
    language,
  );
  return language === 'zh' ? `${parts}前` : `${parts} ago`;
}

/** The daemon's state and status words in Chinese; any other word is printed as the daemon sent it. */
const STATE_ZH: Readonly<Record<string, string>> = {
  ok: '正常',
  degraded: '降级',
  failed: '失败',
  created: '已创建',
  starting: '启动中',
  running: '运行中',
  restarting: '重启中',
  stopping: '停止中',
  stopped: '已停止',
  disabled: '已停用',
  enabled: '已启用',
  quarantined: '已隔离',
  ready: '就绪',
  cooling_down: '冷却中',
  busy: '忙碌',
  done: '完成',
  error: '出错',
  skipped: '已跳过',
  cancelled: '已取消',
  aborted: '已中止',
  started: '已开始',
  queued: '排队中',
  builtin: '内置',
  process: '进程',
  lua: 'Lua',
  skill: '技能',
  shipped: '随附',
  installed: '已安装',
};

/** A daemon state word (running, quarantined …) in `language`; unknown words pass unchanged. */
export function stateWord(state: string, language: Language): string {
  return language === 'zh' ? (STATE_ZH[state] ?? state) : state;
}
