/**
 * A message that is only a sequence's name runs it ("good night", "Good night!", "晚安。"), and so
 * does "/seq <name>" or "run <name>" / "运行<name>" / "执行<name>"; this file finds the name in the
 * text and words the answer, in English and Chinese.
 */
import type { Language } from '../../src/sdk/index.js';

const MAX_NAME_CHARS = 64;
const PREFIX = /^(?:\/seq\s+|run\s+(?:the\s+)?(?:sequence\s+)?|运行|执行)/i;
const TRAILING = /[\s.!?。！？~～…]+$/u;

/** The sequence name the text would run, or undefined when it is a sentence of something else. */
export function sequenceNameIn(text: string): string | undefined {
  const name = text.normalize('NFKC').trim().replace(PREFIX, '').replace(TRAILING, '').trim();
  if (name === '' || [...name].length > MAX_NAME_CHARS) return undefined;
  return name;
}

type AnswerKey = 'done' | 'failed' | 'needs_owner';

const ANSWERS: Record<Language, Record<AnswerKey, (name: string, detail: string) => string>> = {
  en: {
    done: (name, steps) => `Done: ${name} (${steps} steps).`,
    failed: (name, detail) => `${name} stopped: ${detail}`,
    needs_owner: (name) =>
      `${name} has steps that need the owner's approval, so it does not run by its name alone; ask the assistant to run it and approve it.`,
  },
  zh: {
    done: (name, steps) => `已完成：${name}（${steps} 步）。`,
    failed: (name, detail) => `${name} 没有做完：${detail}`,
    needs_owner: (name) => `${name} 含有需要主人批准的步骤，不能只凭名字运行；请让助手运行它，并由主人批准。`,
  },
};

export function byNameAnswer(lang: Language, key: AnswerKey, name: string, detail = ''): string {
  return ANSWERS[lang][key](name, detail);
}
