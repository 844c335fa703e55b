export { collectStream } from './collect.js';
export { httpError, LlmError, type LlmErrorKind, parseRetryAfter, transportError } from './errors.js';
export {
  addUsage,
  type ChatMessage,
  contentImages,
  contentText,
  EMPTY_USAGE,
  type FinishReason,
  type GenerateRequest,
  type GenerateResult,
  type LanguageModel,
  SPEC_VERSION,
  type StreamPart,
  type ToolCall,
  type ToolSpec,
  type Usage,
  type UserContentPart,
} from './model.js';
