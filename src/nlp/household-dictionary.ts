/**
 * A supplement loaded into jieba after its stock dictionary (`word frequency tag` lines). Lowering
 * a frequency breaks a compound the stock dictionary prefers but households rarely mean: 猫叫
 * ("meowing") in 我们家的猫叫咪咪 ("our cat is called Mimi") must cut as 猫 / 叫. jieba keeps the
 * stock tag of a word that already exists, so tag fixes live in chinese-tagger.ts instead.
 */
export const HOUSEHOLD_DICTIONARY = [
  '猫叫 1 v',
  '狗叫 1 v',
  '家养 1 n',
  '喝咖啡 1 v',
  '扫地机器人 300 n',
  '智能家居 2000 n',
  '树莓派 300 nz',
  '路由器 2000 n',
  '热水器 1000 n',
  '空气净化器 300 n',
  '洗碗机 300 n',
  '智能音箱 300 n',
  '燃气费 500 n',
  '水费 500 n',
  '电费 500 n',
  '物业费 500 n',
  '网费 300 n',
  '停车费 300 n',
  '房租 1000 n',
].join('\n');
