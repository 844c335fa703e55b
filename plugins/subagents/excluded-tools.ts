/**
 * The closed list of tools a child sub-agent is never offered nor allowed to call, whatever the
 * settings say: those that start or talk to agents (a child spawning children has no bound), those
 * that change plugins (the tools its turn runs on would change under it, and a child is not the
 * one to decide that), and those that approve or refuse held actions (only the owner decides, and
 * a child must not even ask a tool to). Patterns use `*` for any run of characters; a new tool of
 * such a kind is added here. plugin.subagents.excluded_tools adds to the list, never takes away.
 */
export interface ExcludedKind {
  patterns: readonly string[];
  why: string;
}

export const EXCLUDED_TOOLS: readonly ExcludedKind[] = [
  {
    patterns: ['spawn_child', 'spawn_*', 'child_*', 'resident_agents', 'resident_*', 'notify_parent', 'inputch_note'],
    why: 'it starts or talks to agents',
  },
  {
    patterns: ['plugin_*', 'plgreload', 'skill_install*', 'skill_remove*', 'skill_enable', 'skill_disable'],
    why: 'it changes plugins',
  },
  { patterns: ['confirm*', '*_confirm', 'approve*', '*_approve', 'deny_*', '*_deny'], why: 'it approves or refuses held actions' },
];

/** Every pattern a child is denied: the closed list, then the owner's additions. */
export function excludedPatterns(extra: readonly string[]): string[] {
  return [...EXCLUDED_TOOLS.flatMap((kind) => kind.patterns), ...extra];
}
