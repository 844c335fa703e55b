/**
 * Every sentence file of the local intent engine in one list, for the recogniser and intent-eval:
 * English device control (en-control.ts), English assistant intents (en-assist.ts: timers, lists,
 * media, dates, ...) and Chinese (zh.ts). The recogniser picks the ones of a sentence's language.
 */
import type { IntentSentences } from '../intent-sentences.js';
import { EN_ASSIST } from './en-assist.js';
import { EN_CONTROL } from './en-control.js';
import { ZH_SENTENCES } from './zh.js';

export const ALL_SENTENCES: IntentSentences[] = [...EN_CONTROL, ...EN_ASSIST, ...ZH_SENTENCES];
