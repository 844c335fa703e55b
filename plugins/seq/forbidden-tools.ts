/**
 * The closed list of what a sequence may not do, by tool name: send messages (a sequence runs
 * unattended, from an automation or a two-word command, and must not speak for the household),
 * spawn agents (a sequence is a fixed list of steps, not a way to start open-ended work), change
 * plugins (the tools it calls would change under it) or run or change whole sequences (seq_run,
 * seq_create, seq_delete; composing uses seq_call, which depth and cycle checks bound). Patterns use
 * `*` for any run of characters. The list is closed: a new tool of such a kind is added here.
 */
export interface ForbiddenKind {
  patterns: readonly string[];
  why: string;
}

export const FORBIDDEN_TOOLS: readonly ForbiddenKind[] = [
  { patterns: ['output_send__*', 'qq_send_*', 'mqtt_publish', 'notify_*', 'send_*'], why: 'it sends a message' },
  { patterns: ['spawn_child', 'spawn_*', 'child_*', 'resident_agents', 'notify_parent'], why: 'it starts or talks to another agent' },
  {
    patterns: ['plugin_enable', 'plugin_disable', 'plugin_reload', 'plugin_install*', 'plgreload', 'skill_*'],
    why: 'it changes the plugins whose tools the sequence calls',
  },
  {
    patterns: ['seq_run', 'seq_create', 'seq_delete'],
    why: 'it runs or changes whole sequences (call another sequence with seq_call and #name)',
  },
];

/** Why `tool` is forbidden inside a sequence, or undefined when it is allowed. */
export function forbiddenReason(tool: string): string | undefined {
  for (const kind of FORBIDDEN_TOOLS) if (kind.patterns.some((p) => matches(tool, p))) return kind.why;
  return undefined;
}

function matches(name: string, pattern: string): boolean {
  const star = pattern.indexOf('*');
  if (star < 0) return name === pattern;
  return name.startsWith(pattern.slice(0, star)) && name.endsWith(pattern.slice(star + 1)) && name.length >= pattern.length - 1;
}
