/**
 * The OneBot v11 wire vocabulary HomeAgent uses: events the implementation pushes, actions we call
 * ({action, params, echo}) and their responses. Only the fields we read are typed; everything else
 * passes through untouched.
 */

/** One message segment: `{type: 'text', data: {text}}`, `{type: 'at', data: {qq}}`, ... */
export interface Segment {
  type: string;
  data: Record<string, string>;
}

export interface Sender {
  user_id?: number;
  nickname?: string;
  card?: string;
  role?: string;
}

/** Any event: post_type tells message, notice, request and meta_event apart. */
export interface OneBotEvent {
  post_type: 'message' | 'notice' | 'request' | 'meta_event' | string;
  time?: number;
  self_id?: number;
  message_type?: 'private' | 'group' | string;
  sub_type?: string;
  message_id?: number;
  user_id?: number;
  group_id?: number;
  /** A string with CQ codes, or an array of segments, depending on the implementation's message format. */
  message?: string | Segment[];
  raw_message?: string;
  sender?: Sender;
  notice_type?: string;
  request_type?: string;
  meta_event_type?: string;
  comment?: string;
  flag?: string;
  operator_id?: number;
  [key: string]: unknown;
}

export interface ActionRequest {
  action: string;
  params: Record<string, unknown>;
  echo: string;
}

export interface ActionResponse {
  status: 'ok' | 'failed' | 'async' | string;
  retcode: number;
  data: unknown;
  echo?: unknown;
  msg?: string;
  /** NapCat and Lagrange put the reason here (go-cqhttp: msg). */
  message?: string;
  wording?: string;
}

/** A response carries `status` and `retcode`; an event carries `post_type`. */
export function isActionResponse(value: unknown): value is ActionResponse {
  return typeof value === 'object' && value !== null && 'retcode' in value && 'status' in value && !('post_type' in value);
}

export function isEvent(value: unknown): value is OneBotEvent {
  return typeof value === 'object' && value !== null && typeof (value as { post_type?: unknown }).post_type === 'string';
}
