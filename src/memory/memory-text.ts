/**
 * The text memory compares and stores for a context event: chat-app templates and timestamps
 * removed (they make every message of a channel look alike), the channel's and each tool's own
 * cleaner applied, and nothing from channels or tools marked `no_memory`.
 */
import { isPersonName } from './household-people.js';

/** How one input channel or one tool's results enter memory. */
export interface MemoryPolicy {
  /** Keep this channel's events (or this tool's results) out of memory text and documents. */
  no_memory?: boolean;
  /** Cleans the text before it enters memory. */
  cleaner?: (text: string) => string;
}

export type PolicyLookup = (name: string) => MemoryPolicy | undefined;

/** The parts of a context event the memory text is made from. */
export interface MemoryTextSource {
  channel: string;
  /** Who spoke and where the input came from: a peer other than the source names the speaker. */
  peer?: string;
  source?: string;
  branch: string;
  input: string;
  response: string;
  tool_results: readonly ToolResultRecord[];
}

/** A tool's output as recorded with the event that called it. */
export interface ToolResultRecord {
  tool: string;
  text: string;
}

/** CQ codes of QQ bots: `[CQ:at,qq=123]`, `[CQ:reply,id=5]`, `[CQ:image,file=...]`. */
const CQ_CODE = /\[CQ:[^\]\n]*\]/g;
/** Channel and app tags: `【QQ】`, `【群聊】`, `【微信】`. */
const LENTICULAR_TAG = /【[^】\n]{0,20}】/g;
/** Media placeholders chat apps put where an attachment was. */
const MEDIA_PLACEHOLDER =
  /\[(?:图片|表情|动画表情|语音|视频|文件|回复|引用|image|picture|photo|sticker|emoji|voice|audio|video|file|reply|quote)(?:[:：][^\]\n]{0,80})?\]/gi;
/** WeChat quote blocks: `「Alice：original」` then a dashed rule line. */
const WECHAT_QUOTE = /「[^」]{0,1000}」\s*\n\s*(?:-\s*){3,}/g;
/** Markdown and e-mail style quoted lines. */
const QUOTED_LINE = /^[ \t]*>.*$/gm;
/** Reply headers at the start of a line: `回复 @Alice：`, `Replying to Bob:`. */
const REPLY_HEADER = /^[ \t]*(?:回复|答复|引用|replying to|reply to|in reply to|quote from)[ \t]*@?[^:：\n]{0,40}[:：][ \t]*/gim;
/** Export header lines: `2024-05-06 12:01:33 Alice(123456)` or `... Bob<bob@example.com>`. */
const EXPORT_HEADER =
  /^[ \t]*\d{4}[-/.]\d{1,2}[-/.]\d{1,2}[ \t]+\d{1,2}:\d{2}(?::\d{2})?[ \t]+[^\n]{1,40}?[(（<][^)）>\n]{1,60}[)）>][ \t]*$/gm;
/** A time (optionally with date) opening a line, with the speaker after it: `[12:01] Alice:`. */
const LINE_TIME_PREFIX =
  /^[ \t]*[[(（]?[ \t]*(?:\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?[ \t]*)?\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]*[AaPp][Mm])?[ \t]*[\])）]?[ \t]*(?:[^\s:：[\]]{1,32}[ \t]*[:：][ \t]*)?/gm;
/** A bracketed time anywhere: `(12:01)`, `[2024-05-06 12:01:33]`. */
const BRACKETED_TIME = /[[(（][ \t]*(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}[ T])?\d{1,2}:\d{2}(?::\d{2})?[ \t]*[\])）]/g;
/** Machine timestamps: `2024-05-06T12:01:33.123Z`. Bare dates stay: they are often the content. */
const ISO_TIMESTAMP = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g;

/** Removes chat-app templates and timestamps and normalises white space (lines kept). */
export function cleanChatText(text: string): string {
  const cleaned = text
    .replace(/\r\n?/g, '\n')
    .replace(WECHAT_QUOTE, '')
    .replace(QUOTED_LINE, '')
    .replace(EXPORT_HEADER, '')
    .replace(CQ_CODE, ' ')
    .replace(LENTICULAR_TAG, ' ')
    .replace(MEDIA_PLACEHOLDER, ' ')
    .replace(ISO_TIMESTAMP, ' ')
    .replace(LINE_TIME_PREFIX, '')
    .replace(BRACKETED_TIME, ' ')
    .replace(REPLY_HEADER, '');
  return cleaned
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0\u3000]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

/** Which parts of an event its similarity text uses, by branch. */
export function branchText(source: MemoryTextSource): string {
  const response = answeredFromNothing(source.tool_results) ? '' : source.response;
  switch (source.branch) {
    case 'agent':
      return response;
    case 'cold_storage':
      return joinParts([source.input, response]);
    default:
      return source.input;
  }
}

/**
 * True when a lookup of the turn found nothing (a memory or knowledge tool answered `no_record`):
 * the answer built on it ("I have no record of that") states no fact, and kept as memory it would
 * come back as a hit for every later question with the same words. The question stays.
 */
function answeredFromNothing(results: readonly ToolResultRecord[]): boolean {
  return results.some((result) => result.text.includes('"no_record":true') && parsesAsNoRecord(result.text));
}

function parsesAsNoRecord(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && (value as { no_record?: unknown }).no_record === true;
  } catch {
    return false;
  }
}

export interface MemoryTextOptions {
  channelPolicy?: PolicyLookup | undefined;
  toolPolicy?: PolicyLookup | undefined;
  /** Called when a cleaner throws; the text it was cleaning is left out. */
  onCleanerError?: (owner: string, error: unknown) => void;
}

/** True when the event's channel keeps its events out of memory. */
export function isNoMemoryChannel(channel: string, options: MemoryTextOptions): boolean {
  return options.channelPolicy?.(channel)?.no_memory === true;
}

/**
 * The event's memory text: `text` (by default its branch text) through the channel cleaner,
 * plus the results of tools not marked `no_memory` through their cleaners, then
 * {@link cleanChatText}. Empty for a `no_memory` channel.
 */
export function memoryText(source: MemoryTextSource, options: MemoryTextOptions, text: string = branchText(source)): string {
  const channel = options.channelPolicy?.(source.channel);
  if (channel?.no_memory) return '';
  const parts = [applyCleaner(text, channel, `channel:${source.channel}`, options)];
  for (const result of memoryToolResults(source.tool_results, options)) parts.push(result.text);
  const cleaned = cleanChatText(joinParts(parts));
  const speaker = speakerOf(source);
  if (speaker === undefined || cleaned === '' || cleaned.startsWith(`${speaker}:`) || cleaned.startsWith(`${speaker}：`)) return cleaned;
  return `${speaker}: ${cleaned}`;
}

/**
 * Who said an input, when it is a person (a chat peer, a recognised speaker) rather than the
 * source itself: memory keeps "Alice: ..." so that both recall ("what did Alice say about ...")
 * and the prompt know whose words they are. The agent's own answers carry no name.
 */
function speakerOf(source: MemoryTextSource): string | undefined {
  if (source.branch === 'agent' || source.input.trim() === '') return undefined;
  const peer = source.peer?.trim() ?? '';
  return isPersonName(peer, { source: source.source ?? '', channel: source.channel }) ? peer : undefined;
}

/**
 * The tool results that may enter memory: only through their tool's cleaner. A tool without one
 * (or marked `no_memory`) keeps its results out: raw tool output is JSON, ids and receipts
 * (`{"entity_id":"switch.garden_pump",...}`), which would outrank what people said on every
 * shared word; what the turn meant is in the model's answer. A cleaner that leaves nothing
 * leaves nothing.
 */
export function memoryToolResults(results: readonly ToolResultRecord[], options: MemoryTextOptions): ToolResultRecord[] {
  return results.flatMap((result) => {
    const tool = options.toolPolicy?.(result.tool);
    if (tool?.no_memory || !tool?.cleaner) return [];
    const text = applyCleaner(result.text, tool, `tool:${result.tool}`, options).trim();
    return text === '' ? [] : [{ tool: result.tool, text }];
  });
}

/** True when a tool's results may enter memory at all (it has a cleaner and is not `no_memory`). */
export function toolEntersMemory(policy: MemoryPolicy | undefined): boolean {
  return policy?.no_memory !== true && policy?.cleaner !== undefined;
}

function applyCleaner(text: string, policy: MemoryPolicy | undefined, owner: string, options: MemoryTextOptions): string {
  if (!policy?.cleaner) return text;
  try {
    return policy.cleaner(text);
  } catch (error) {
    // A failing cleaner may be the one that removes something private: leave the text out.
    options.onCleanerError?.(owner, error);
    return '';
  }
}

function joinParts(parts: readonly string[]): string {
  return parts.filter((p) => p.trim() !== '').join('\n');
}
