/**
 * `homeagentctl confirm list|approve CODE|deny CODE`: the dangerous actions waiting for the owner
 * (src/agent/confirmation-methods.ts). Whoever can open the CLI socket is the owner, so this is
 * where a request that came from MQTT, a group chat or a voice in the room is decided: the list
 * shows exactly what would run and where the request came from; approve runs it and prints what
 * it did; deny drops it.
 */
import type { ConfirmationRequest } from '../events/event-bus.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage, stateWord } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { AGENT_TURN_TIMEOUT_MS, CommandUsageError, defineCommand, type NoFlags } from './command-module.js';

export type ConfirmCommand = { command: 'list' } | { command: 'approve' | 'deny'; code: string };

export class ConfirmUsageError extends CommandUsageError {}

/** `homeagentctl confirm` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const confirmCommand = defineCommand<NoFlags>({
  name: 'confirm',
  options: {},
  usage: [
    {
      synopsis: 'confirm [list]',
      about: 'dangerous actions waiting for your approval: what would run, who asked, from where',
      zh: '等待你批准的危险操作：要执行什么、谁请求的、来自哪里',
    },
    {
      synopsis: 'confirm approve|deny CODE',
      about: 'run one exactly as shown (and print what it did), or drop it',
      zh: '按所示原样执行一项（并输出执行结果），或将其丢弃',
    },
  ],
  // approve runs the action in an agent turn, which may use tools for minutes.
  defaultTimeoutMs: AGENT_TURN_TIMEOUT_MS,
  parse: (args) => {
    const command = parseConfirmCommand(args);
    return (context) => runConfirm(command, context);
  },
});

const CODE = /^[A-Za-z0-9]{6}$/;

/** Reads `confirm [list] | approve CODE | deny CODE` (positionals after `confirm`). Throws ConfirmUsageError. */
export function parseConfirmCommand(positionals: readonly string[]): ConfirmCommand {
  const [sub, ...rest] = positionals;
  if (sub === undefined || sub === 'list') {
    if (rest.length > 0) throw new ConfirmUsageError('confirm list takes no arguments', 'confirm list 不接受参数');
    return { command: 'list' };
  }
  if (sub !== 'approve' && sub !== 'deny')
    throw new ConfirmUsageError(
      `unknown confirm command ${sub}; use list, approve CODE or deny CODE`,
      `未知的 confirm 子命令 ${sub}；可用 list、approve CODE 或 deny CODE`,
    );
  const [code, ...extra] = rest;
  if (code === undefined || extra.length > 0 || !CODE.test(code))
    throw new ConfirmUsageError(
      `confirm ${sub} needs one six-character CODE (confirm list shows them)`,
      `confirm ${sub} 需要一个六位的 CODE（confirm list 会列出）`,
    );
  return { command: sub, code: code.toUpperCase() };
}

interface ApproveAnswer {
  code: string;
  tool: string;
  receipt: { status: string; text?: string; reason?: string; error?: { message: string } };
}

export async function runConfirm(command: ConfirmCommand, options: CommandRunOptions): Promise<number> {
  const now = options.now ?? Date.now;
  const language = runLanguage(options);
  return withDaemon(options, undefined, async ({ call, print }) => {
    switch (command.command) {
      case 'list':
        return print((await call('confirm.list', {})) as { pending: ConfirmationRequest[] }, (r) =>
          formatPending(r.pending, now(), language),
        );
      case 'approve': {
        const answer = (await call('confirm.approve', { code: command.code, channel: 'cli' })) as ApproveAnswer;
        print(answer, (a) => formatApproved(a, language));
        return answer.receipt.status === 'done' ? EXIT_CODES.OK : EXIT_CODES.FAILURE;
      }
      case 'deny':
        return print((await call('confirm.deny', { code: command.code })) as { code: string; tool: string }, (r) =>
          WORDS[language].refused(r.code, r.tool),
        );
    }
  });
}

/** Every sentence the confirm command prints around the request, in both languages. */
const WORDS = {
  en: {
    nothing: 'nothing waits for your approval',
    read: (sources: string[]) => `; it had read ${sources.join(', ')}`,
    asked: (channel: string, sender: string, trust: string, proof: string, read: string) =>
      `asked on ${channel} by ${sender} (${trust}: ${proof})${read}`,
    expires: (seconds: number, code: string) => `expires in ${seconds} s; homeagentctl confirm approve ${code} | deny ${code}`,
    ran: (tool: string) => `${tool} ran`,
    status: (status: string) => status,
    refused: (code: string, tool: string) => `refused ${code}: ${tool} will not run`,
  },
  zh: {
    nothing: '没有等待你批准的操作',
    read: (sources: string[]) => `；它读过 ${sources.join('、')}`,
    asked: (channel: string, sender: string, trust: string, proof: string, read: string) =>
      `由 ${sender} 在 ${channel} 上请求（${trust}：${proof}）${read}`,
    expires: (seconds: number, code: string) => `${seconds} 秒后过期；homeagentctl confirm approve ${code} | deny ${code}`,
    ran: (tool: string) => `${tool} 已执行`,
    status: (status: string) => stateWord(status, 'zh'),
    refused: (code: string, tool: string) => `已拒绝 ${code}：${tool} 不会执行`,
  },
} as const;

export function formatPending(pending: readonly ConfirmationRequest[], now: number, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (pending.length === 0) return w.nothing;
  return pending
    .map((p) => {
      const sender = p.origin.sender;
      const read = p.trust.lowered_by.length > 0 ? w.read(p.trust.lowered_by) : '';
      return [
        `${p.code}  ${p.tool} ${p.arguments}`,
        `        ${w.asked(p.origin.channel, sender.id, sender.trust, sender.proof, read)}`,
        `        ${w.expires(Math.max(0, Math.round((p.expires_at - now) / 1000)), p.code)}`,
      ].join('\n');
    })
    .join('\n');
}

function formatApproved(answer: ApproveAnswer, language: Language): string {
  const { receipt } = answer;
  const w = WORDS[language];
  if (receipt.status === 'done') return receipt.text ?? w.ran(answer.tool);
  const why = receipt.error ? receipt.error.message : receipt.reason;
  const colon = language === 'zh' ? '：' : ': ';
  return `${answer.tool}${colon}${w.status(receipt.status)}${why ? `${colon}${why}` : ''}`;
}
