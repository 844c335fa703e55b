/**
 * `homeagentctl lists [list]|show|add|done|remove`: the shopping and to-do lists of a running
 * daemon (the `lists.*` control methods). Offline, with no language model, this is how whoever
 * looks after the box reads the shopping list. Items are the rest of the words, so `lists add oat
 * milk` needs no quotes; without --list every command works on the shopping list, as the intents
 * and the model's tools do.
 */
import type { ListsShowResult } from '../lists/list-methods.js';
import { type AddResult, describeList, type ListChange, type ListItem, type ListSummary } from '../lists/list-store.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand } from './command-module.js';
import { age } from './entities.js';
import { table } from './format.js';

/** homeagentctl's option table entries for lists (merged into its parseArgs options). */
export const LISTS_OPTIONS = {
  list: { type: 'string' },
  all: { type: 'boolean' },
} as const;

export type ListsFlags = {
  [K in keyof typeof LISTS_OPTIONS]?: ((typeof LISTS_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string) | undefined;
};

export type ListsCommand =
  | { command: 'list' }
  | { command: 'show'; list?: string; include_done: boolean }
  | { command: 'add' | 'done' | 'remove'; list?: string; item: string };

export class ListsUsageError extends Error {}

/** `homeagentctl lists` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const listsCommand = defineCommand<ListsFlags>({
  name: 'lists',
  options: LISTS_OPTIONS,
  usage: [
    { synopsis: 'lists [list]', about: 'shopping and to-do lists with their open and done item counts' },
    {
      synopsis: 'lists show [LIST | --list',
      about: "LIST] [--all]\na list's open items (default the shopping list; --all: the done ones too)",
    },
    { synopsis: 'lists add [--list LIST] ITEM...', about: 'put an item on a list (made on first use), e.g. lists add oat milk' },
    {
      synopsis: 'lists done|remove [--list',
      about: 'LIST] ITEM...\ntick an item off, or delete it (part of its text is enough when only one item has it)',
    },
  ],
  parse: (args, flags) => {
    const command = parseListsCommand(args, flags);
    return (context) => runLists(command, context);
  },
});

const COMMANDS = 'list, show, add, done or remove';

const ALLOWED: Record<ListsCommand['command'], ReadonlyArray<keyof ListsFlags>> = {
  list: [],
  show: ['all', 'list'],
  add: ['list'],
  done: ['list'],
  remove: ['list'],
};

/** The lists flags given on the command line (the parser refuses those its subcommand does not take). */
export function listsFlagsUsed(flags: ListsFlags): Array<keyof ListsFlags> {
  return (Object.keys(LISTS_OPTIONS) as Array<keyof ListsFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `lists [<sub> …]` (positionals after `lists`); throws ListsUsageError. No sub-command means list. */
export function parseListsCommand(positionals: readonly string[], flags: ListsFlags): ListsCommand {
  const [sub = 'list', ...rest] = positionals;
  if (!Object.hasOwn(ALLOWED, sub)) throw new ListsUsageError(`unknown lists command ${sub}; use ${COMMANDS}`);
  const command = sub as ListsCommand['command'];
  const stray = listsFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0) throw new ListsUsageError(`--${stray[0]} does not belong to lists ${command}`);
  switch (command) {
    case 'list':
      if (rest.length > 0) throw new ListsUsageError('lists list takes no arguments (lists show LIST shows one list)');
      return { command };
    case 'show': {
      // The words are the list's name, so `lists show hardware store` needs no quotes; --list is
      // taken too, as after `lists add --list …`.
      const named = words(rest);
      if (named !== '' && flags.list !== undefined) throw new ListsUsageError('lists show takes the LIST once: as words or with --list');
      const list = named === '' ? listFlag(flags) : named;
      return { command, ...(list !== undefined && { list }), include_done: flags.all === true };
    }
    case 'add':
    case 'done':
    case 'remove': {
      const item = words(rest);
      if (item === '') throw new ListsUsageError(`lists ${command} needs an ITEM, e.g. lists ${command} milk`);
      const list = listFlag(flags);
      return { command, ...(list !== undefined && { list }), item };
    }
  }
}

function listFlag(flags: ListsFlags): string | undefined {
  if (flags.list === undefined) return undefined;
  const list = flags.list.trim();
  if (list === '') throw new ListsUsageError('--list needs a LIST name');
  return list;
}

function words(rest: readonly string[]): string {
  return rest.join(' ').trim();
}

/**
 * Runs a parsed lists command; resolves with the exit code. Daemon errors (an unknown list, an
 * ambiguous item) are thrown; homeagentctl reports them. `options.now` is the clock for "done … ago".
 */
export async function runLists(command: ListsCommand, options: CommandRunOptions): Promise<number> {
  const now = (options.now ?? Date.now)();
  return withDaemon(options, undefined, async ({ call, print }) => {
    const list = 'list' in command && command.list !== undefined ? { list: command.list } : {};
    switch (command.command) {
      case 'list':
        return print((await call('lists.list', {})) as ListSummary[], formatListSummaries);
      case 'show':
        return print((await call('lists.show', { ...list, include_done: command.include_done })) as ListsShowResult, (r) =>
          formatListItems(r, now, command.include_done),
        );
      case 'add':
        return print((await call('lists.add', { ...list, item: command.item })) as AddResult, formatAdded);
      case 'done':
        return print(
          (await call('lists.complete', { ...list, item: command.item })) as ListChange,
          (r) => `ticked off ${r.item.text} on ${describeList(r.list)}`,
        );
      case 'remove':
        return print(
          (await call('lists.remove', { ...list, item: command.item })) as ListChange,
          (r) => `removed ${r.item.text} from ${describeList(r.list)}`,
        );
    }
  });
}

// ---- readable output ----

export function formatListSummaries(lists: ListSummary[]): string {
  return table([['LIST', 'OPEN', 'DONE'], ...lists.map((l) => [l.name, String(l.open), String(l.done)])], '');
}

/** The list's name, then one line per item: "☐ milk", "☑ eggs (done 2h ago)". */
export function formatListItems(r: ListsShowResult, now: number, includeDone: boolean): string {
  if (r.items.length === 0) return `${describeList(r.list)} has no ${includeDone ? '' : 'open '}items`;
  return [`${r.list}:`, ...r.items.map((item) => `  ${itemLine(item, now)}`)].join('\n');
}

export function itemLine(item: ListItem, now: number): string {
  if (!item.done) return `☐ ${item.text}`;
  return item.done_at === null ? `☑ ${item.text}` : `☑ ${item.text} (done ${age(item.done_at, now)})`;
}

export function formatAdded(r: AddResult): string {
  return r.added ? `added ${r.item.text} to ${describeList(r.list)}` : `${r.item.text} is already on ${describeList(r.list)}`;
}
