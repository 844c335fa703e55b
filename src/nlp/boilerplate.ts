/**
 * Chat-app template text: timestamps and sender headers, media placeholders, system notices. None
 * of it is something a person said, so extraction strips the first two and skips the third.
 */

const PLACEHOLDER =
  /\[(?:image|photo|picture|sticker|voice|audio|video|file|gif|emoji|图片|表情|动画表情|语音|视频|文件|红包|位置|链接)\]|<media omitted>|\[CQ:[^\]]*\]|<at\s[^>]*>/giu;
const HEADER =
  /^\s*(?:\[?\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?(?:\s+|T)?(?:\d{1,2}:\d{2}(?::\d{2})?)?\]?|\[\d{1,2}:\d{2}(?::\d{2})?\])\s*(?:[^\s:：]{1,24}\s*[:：])?\s*/u;
const SYSTEM_NOTICES = [
  /撤回了一条消息/u,
  /系统消息/u,
  /加入了?群聊/u,
  /邀请.{1,24}加入/u,
  /拍了拍/u,
  /this message was deleted/i,
  /messages and calls are end-to-end encrypted/i,
  /joined using this group's invite link/i,
  /\b(?:left|joined) the group\b/i,
  /\bchanged the (?:group|subject)\b/i,
];
const CONTENT = /[\p{L}\p{N}]/u;

/** The text without chat headers and media placeholders. */
export function stripChatTemplate(text: string): string {
  return text.replace(HEADER, '').replace(PLACEHOLDER, ' ').trim();
}

/** A system notice, or nothing left once the template is stripped. */
export function isBoilerplate(text: string): boolean {
  if (SYSTEM_NOTICES.some((pattern) => pattern.test(text))) return true;
  return !CONTENT.test(stripChatTemplate(text));
}

const CHINESE_QUESTION =
  /[？?]\s*$|(?:吗|呢|么|嘛)[。！!～~\s]*$|什么|哪|谁|怎么|怎样|为什么|几点|多少|是否|是不是|有没有|能不能|可不可以/u;
const ENGLISH_QUESTION =
  /\?\s*$|^\s*(?:what|what's|who|who's|whom|whose|which|where|where's|when|why|how|how's|do|does|did|is|are|am|was|were|can|could|will|would|should|shall|may|might|have|has|had|isn't|aren't|don't|doesn't|didn't|can't|won't)\b/i;

/** Questions state no fact, whatever their words look like. */
export function isQuestion(sentence: string, han: boolean): boolean {
  return han ? CHINESE_QUESTION.test(sentence) : ENGLISH_QUESTION.test(sentence);
}
