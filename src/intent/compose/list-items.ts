/**
 * What a list item is once the words around it are gone (issue 26): a measure word or a count
 * said before it ("加个牛奶", "一条倒垃圾", "some eggs") and the reason said after it ("牛奶没了":
 * the milk has run out) belong to the sentence, not to the item a family would read on the list.
 * Both the templates' free text and the composer's items pass through here.
 */

/** A count and a measure word before a Chinese item: 个, 一个, 一些, 两瓶, 一条 … */
const ZH_MEASURE = /^(?:[一两二三四五六七八九十几]|俩)?(?:个|条|瓶|盒|袋|包|些|份|箱|罐|斤|打|颗|根|块|把|桶|提)(?=.)/u;
/** Why it is needed, said after it: 没了, 没有了, 用完了, 快没了, 吃完了 … */
const ZH_REASON = /(?:快|又|都|已经)?(?:没了|没有了|用完了|吃完了|喝完了|用光了|没)$/u;
/** English words that count or point before an item ("some", "a", "more"). */
const EN_LEAD = /^(?:some|a|an|more|a few|few|a couple of|another)\s+(?=\S)/u;

/** The list said before the item ("购物清单上的鸡蛋", "the shopping list's eggs") is where it is, not what. */
function withoutList(item: string, lists: readonly string[]): string {
  for (const list of lists) {
    const at = item.toLowerCase().indexOf(list.toLowerCase());
    if (at !== 0) continue;
    const rest = item
      .slice(list.length)
      .replace(/^(上|里|中)?的|^s?\s+/u, '')
      .trim();
    if (rest !== '') return rest;
  }
  return item;
}

export function tidyItem(item: string, language: 'en' | 'zh', lists: readonly string[] = []): string {
  if (language === 'en') return withoutList(item, lists).replace(EN_LEAD, '').trim();
  let out = withoutList(item, lists).replace(ZH_REASON, '');
  // "一点" / "点" before an item is a little of it; "点心" is an item of its own, so only after 一.
  out = out.replace(/^一点(?=.)/u, '');
  out = out.replace(ZH_MEASURE, '');
  return out === '' ? item : out;
}
