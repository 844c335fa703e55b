/**
 * The qq_* tools. Sends answer the model exactly "ok" (a rich receipt is what made the original
 * send 80+ times in one turn), count against the turn's send budget, and go only to owners,
 * allowed users and allowed groups. Lookups return compact objects. Action failures become
 * ToolErrors carrying the implementation's retcode and wording.
 */
import { isHomeAgentError, type ToolContext, type ToolDefinition, ToolError } from '../../src/sdk/index.js';
import type { Call } from './outgoing.js';
import { sendText } from './outgoing.js';
import type { AccessPolicy } from './policy.js';
import type { SendBudget } from './send-budget.js';

export const SEND_RECEIPT = 'ok';
/** Groups listed at most by qq_get_group_list. */
const MAX_GROUPS = 100;

export interface ToolDeps {
  call: Call;
  policy: AccessPolicy;
  budget: SendBudget;
  maxChars(): number;
}

const QQ_ID = { type: 'integer', minimum: 10000, maximum: 999999999999 };
const MESSAGE = { type: 'string', minLength: 1, maxLength: 20000, description: 'The text to send.' };

/** qq_send_private_msg (to user_id) or qq_send_group_msg (to group_id). */
function sendTool(deps: ToolDeps, kind: 'private' | 'group', description: string, idDescription: string) {
  const idKey = kind === 'private' ? 'user_id' : 'group_id';
  return {
    name: `qq_send_${kind}_msg`,
    description,
    parameters: {
      type: 'object',
      properties: { [idKey]: { ...QQ_ID, description: idDescription }, message: MESSAGE },
      required: [idKey, 'message'],
      additionalProperties: false,
    },
    tier: 'act' as const,
    execute: (args: Record<string, unknown>, context: ToolContext) =>
      send(deps, kind, args[idKey] as number, args.message as string, context),
  };
}

export function qqTools(deps: ToolDeps): Array<Omit<ToolDefinition<Record<string, unknown>>, 'owner'>> {
  return [
    sendTool(deps, 'private', 'Send a QQ private message to an owner or allowed user. Returns "ok".', 'QQ number.'),
    sendTool(deps, 'group', 'Send a message to an allowed QQ group. Returns "ok".', 'QQ group number.'),
    {
      name: 'qq_get_group_member_info',
      description: 'Look up a member of a QQ group: nickname, group card, role.',
      parameters: {
        type: 'object',
        properties: { group_id: QQ_ID, user_id: QQ_ID },
        required: ['group_id', 'user_id'],
        additionalProperties: false,
      },
      tier: 'read',
      parallel_safe: true,
      execute: async (args) => {
        const data = (await run(deps, 'get_group_member_info', {
          group_id: args.group_id,
          user_id: args.user_id,
          no_cache: false,
        })) as Record<string, unknown>;
        return pick(data, ['user_id', 'nickname', 'card', 'role', 'title']);
      },
    },
    {
      name: 'qq_get_group_list',
      description: 'List the QQ groups the bot is in: id, name, member count.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      tier: 'read',
      parallel_safe: true,
      execute: async () => {
        const data = await run(deps, 'get_group_list', {});
        const groups = Array.isArray(data) ? data : [];
        return groups.slice(0, MAX_GROUPS).map((g) => pick(g as Record<string, unknown>, ['group_id', 'group_name', 'member_count']));
      },
    },
    {
      name: 'qq_get_login_info',
      description: "The bot's own QQ number and nickname.",
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      tier: 'read',
      parallel_safe: true,
      execute: async () => pick((await run(deps, 'get_login_info', {})) as Record<string, unknown>, ['user_id', 'nickname']),
    },
  ];
}

async function send(deps: ToolDeps, type: 'private' | 'group', id: number, message: string, context: ToolContext): Promise<string> {
  const allowed = type === 'group' ? deps.policy.groupAllowed(id) : deps.policy.userAllowed(id);
  if (!allowed) {
    throw new ToolError({
      reason: 'unauthorized',
      field: type === 'group' ? 'group_id' : 'user_id',
      detail: `${id} is not an owner, allowed user or allowed group (plugin.onebot.owners / allow_users / allow_groups)`,
    });
  }
  deps.budget.take(context.task_id);
  try {
    await sendText(deps.call, { type, id }, message, deps.maxChars());
  } catch (error) {
    throw asToolError(error);
  }
  return SEND_RECEIPT;
}

async function run(deps: ToolDeps, action: string, params: Record<string, unknown>): Promise<unknown> {
  try {
    return await deps.call(action, params);
  } catch (error) {
    throw asToolError(error);
  }
}

/** The model reads what failed in one line: the retcode and wording for failed actions. */
export function asToolError(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (isHomeAgentError(error, 'HA_ERR_ONEBOT_TIMEOUT')) return new ToolError({ reason: 'timeout', detail: error.message });
  if (isHomeAgentError(error, 'HA_ERR_ONEBOT_CONNECTION'))
    return new ToolError({ reason: 'unavailable', detail: error.message, hint: 'QQ is not connected now; tell the person' });
  return new ToolError({ reason: 'failed', detail: error instanceof Error ? error.message : String(error) });
}

function pick(data: Record<string, unknown> | null | undefined, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (data && data[key] !== undefined && data[key] !== '') out[key] = data[key];
  return out;
}
