/**
 * Words that carry no search value. Kept short on purpose: a word missing here costs a little
 * index space, a word wrongly listed here makes facts unfindable.
 */

export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but nor so yet if then else than that this these those there here ' +
    'i me my mine myself you your yours yourself he him his himself she her hers herself it its itself ' +
    'we us our ours ourselves they them their theirs themselves ' +
    'am is are was were be been being have has had having do does did doing done ' +
    'will would shall should can could may might must ' +
    "i'm i've i'll i'd you're you've you'll he's she's it's we're we've they're they've " +
    "don't doesn't didn't isn't aren't wasn't weren't can't won't wouldn't shouldn't couldn't " +
    "what's that's there's let's " +
    'of in on at to for with from by about into onto over under up down out off as ' +
    'not no very too also just only all any some each every both either neither other such ' +
    'what which who whom whose when where why how ' +
    'oh ok okay yes yeah please thanks thank hi hello hey ' +
    's t'
  ).split(' '),
);

export const CHINESE_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    '的 地 得 了 着 过 吗 呢 吧 啊 呀 哦 嗯 哈 啦 嘛 么 ' +
    '是 在 有 和 与 及 或 而 并 但 就 都 也 还 又 再 才 只 很 太 更 最 ' +
    '我 你 您 他 她 它 我们 你们 他们 她们 它们 咱们 自己 ' +
    '这 那 这个 那个 这些 那些 这里 那里 这儿 那儿 这样 那样 ' +
    '把 被 让 给 对 从 向 到 往 跟 比 为 于 以 ' +
    '一个 一些 一下 一点 什么 怎么 怎样 为什么 哪 哪里 哪儿 谁 ' +
    '不 没 没有 别 已经 会 能 要 可以 可能 应该 ' +
    '个 些 之 其 所 等 啥 ' +
    '， 。 ！ ？ ； ： 、 “ ” ‘ ’ （ ） 【 】 《 》 … —'
  ).split(' '),
);

export function isStopWord(word: string): boolean {
  return ENGLISH_STOP_WORDS.has(word) || CHINESE_STOP_WORDS.has(word);
}
