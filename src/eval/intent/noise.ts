/**
 * Seeded character noise for intent-eval (issue 26): stands in for speech-to-text and typing errors
 * so robustness can be measured as accuracy at a noise level. Each letter or Han character is,
 * with probability `rate`, dropped, doubled, swapped with the next one, or (Chinese) replaced by a
 * near-homophone from the table below. The same sentence, level and seed always give the same
 * text, so runs compare. The table is ours, written from common mishearings of the characters
 * home commands use; the recogniser does not read it (it must cope by fuzzy matching, not by
 * knowing the noise).
 */

/** Groups of characters a Mandarin recogniser confuses (same or near syllable). */
const HOMOPHONE_GROUPS = [
  '灯登等邓',
  '开凯慨',
  '关官管观',
  '台太抬泰',
  '调条掉',
  '度渡杜肚',
  '门们闷',
  '窗床创',
  '帘连莲联',
  '锁所索',
  '扇善山',
  '厅听停亭',
  '卧握沃',
  '厨除储',
  '房防方放',
  '温文闻',
  '湿十时石实',
  '计记机几己',
  '分份粉',
  '钟中终种',
  '暂站战',
  '音因阴',
  '量亮两辆',
  '打大达',
  '把吧八巴',
  '空控孔',
  '车扯',
  '库裤酷',
  '客课刻',
  '书输舒',
  '阳羊扬洋',
  '吊掉钓',
  '地的得',
  '扫嫂',
  '电店点典',
  '视是事试',
  '播波拨',
  '首手守',
  '加家佳',
  '购够构',
  '物务误',
  '清青轻请',
  '单但担',
  '天添田',
  '气器汽起',
  '号好浩',
  '星心新',
  '期七齐其',
  '前钱潜',
  '后候厚',
  '上尚',
  '下夏吓',
  '全权泉',
  '窗创',
  '幕木目',
  '水睡税',
  '壶湖胡',
  '风封疯',
  '冷愣',
  '热惹',
  '亮谅',
  '晚碗',
  '安按岸',
  '模摸魔',
  '式是事',
];

const HOMOPHONES: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, string[]>();
  for (const group of HOMOPHONE_GROUPS) {
    const chars = [...group];
    for (const ch of chars) map.set(ch, [...(map.get(ch) ?? []), ...chars.filter((other) => other !== ch)]);
  }
  return map;
})();

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of the text, so each sentence draws its own sequence from the run's seed. */
function hash(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const EDITABLE = /[\p{L}\p{N}]/u;
const HAN = /\p{Script=Han}/u;

export type NoiseEdit = 'drop' | 'double' | 'swap' | 'homophone';

/**
 * `text` with seeded character edits at `rate` (0..1) per letter or Han character. A Han
 * character that has near-homophones is replaced by one in half of its edits (the commonest
 * speech-to-text error in Chinese); other edits are a drop, a double or a swap with the next
 * character, equally likely.
 */
export function addNoise(text: string, rate: number, seed = 1): string {
  if (rate <= 0) return text;
  const random = generator(hash(text, seed));
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (!EDITABLE.test(ch) || random() >= rate) {
      out.push(ch);
      continue;
    }
    const near = HAN.test(ch) ? HOMOPHONES.get(ch) : undefined;
    if (near !== undefined && random() < 0.5) {
      out.push(near[Math.floor(random() * near.length)] as string);
      continue;
    }
    const pick = random();
    if (pick < 1 / 3) continue; // dropped
    if (pick < 2 / 3) {
      out.push(ch, ch);
      continue;
    }
    const next = chars[i + 1];
    if (next === undefined || !EDITABLE.test(next)) out.push(ch, ch);
    else {
      out.push(next, ch);
      i += 1;
    }
  }
  return out.join('');
}

/** How many characters of the table have near-homophones (the tests check it is not empty). */
export const HOMOPHONE_COUNT = HOMOPHONES.size;
