/** The values of Chinese numeral characters, shared by memory's fact parser and the intent engine. */
export const HAN_DIGITS: Readonly<Record<string, number>> = {
  零: 0,
  〇: 0,
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};
export const HAN_UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000 };
