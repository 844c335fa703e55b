/**
 * `homeagentctl lists [list]|show|add|done|remove`: the shopping and to-do lists of a running
 * daemon (the `lists.*` control methods). Offline, with no language model, this is how whoever
 * looks after the box reads the shopping list. Items are the rest of the words, so `lists add oat
 * milk` needs no quotes; without --list every command works on the shopping list, as the intents
 * and the model's tools do.
 */
import type { ListsShowResult } from '../lists/list-methods.js';
import { type AddResult, describeList, type ListChange, type ListItem, type ListSummary } from '../lists/list-store.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { agoIn, runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
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

export class ListsUsageError extends CommandUsageError {}

/** `homeagentctl lists` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const listsCommand = defineCommand<ListsFlags>({
  name: 'lists',
  options: LISTS_OPTIONS,
  usage: [
    {
      synopsis: 'lists [list]',
      about: 'shopping and to-do lists with their open and done item counts',
      zh: '购物清单和待办清单，附未完成和已完成的条目数',
    },
    {
      synopsis: 'lists show [LIST | --list LIST] [--all]',
      about: "a list's open items (default the shopping list; --all: the done ones too)",
      zh: '一个清单中未完成的条目（默认购物清单；--all：连同已完成的）',
    },
    {
      synopsis: 'lists add [--list LIST] ITEM...',
      about: 'put an item on a list (made on first use), e.g. lists add oat milk',
      zh: '把条目加到清单（首次用到时创建），例如 lists add oat milk',
    },
    {
      synopsis: 'lists done|remove [--list LIST] ITEM...',
      about: 'tick an item off, or delete it (part of its text is enough when only one item has it)',
      zh: '勾掉或删除一个条目（只有一个条目含这段文字时，写出一部分即可）',
    },
  ],
  parse: (args, flags) => {
    const command = parseListsCommand(args, flags);
    return (context) => runLists(command, context);
  },
});

const COMMANDS = 'list, show, add, done or remove';
const COMMANDS_ZH = 'list、show、add、done 或 remove';

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
  if (!Object.hasOwn(ALLOWED, sub))
    throw new ListsUsageError(`unknown lists command ${sub}; use ${COMMANDS}`, `未知的 lists 子命令 ${sub}；可用 ${COMMANDS_ZH}`);
  const command = sub as ListsCommand['command'];
  const stray = listsFlagsUsed(flags).filter((f) => !ALLOWED[command].includes(f));
  if (stray.length > 0)
    throw new ListsUsageError(`--${stray[0]} does not belong to lists ${command}`, `--${stray[0]} 不属于 lists ${command}`);
  switch (command) {
    case 'list':
      if (rest.length > 0)
        throw new ListsUsageError(
          'lists list takes no arguments (lists show LIST shows one list)',
          'lists list 不接受参数（lists show LIST 显示一个清单）',
        );
      return { command };
    case 'show': {
      // The words are the list's name, so `lists show hardware store` needs no quotes; --list is
      // taken too, as after `lists add --list …`.
      const named = words(rest);
      if (named !== '' && flags.list !== undefined)
        throw new ListsUsageError(
          'lists show takes the LIST once: as words or with --list',
          'lists show 只接受一次 LIST：直接写出，或用 --list',
        );
      const list = named === '' ? listFlag(flags) : named;
      return { command, ...(list !== undefined && { list }), include_done: flags.all === true };
    }
    case 'add':
    case 'done':
    case 'remove': {
      const item = words(rest);
      if (item === '')
        throw new ListsUsageError(
          `lists ${command} needs an ITEM, e.g. lists ${command} milk`,
          `lists ${command} 需要一个 ITEM，例如 lists ${command} milk`,
        );
      const list = listFlag(flags);
      return { command, ...(list !== undefined && { list }), item };
    }
  }
}

function listFlag(flags: ListsFlags): string | undefined {
  if (flags.list === undefined) return undefined;
  const list = flags.list.trim();
  if (list === '') throw new ListsUsageError('--list needs a LIST name', '--list 需要一个清单名 LIST');
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
  const language = runLanguage(options);
  const w = WORDS[language];
  return withDaemon(options, undefined, async ({ call, print }) => {
    const list = 'list' in command && command.list !== undefined ? { list: command.list } : {};
    switch (command.command) {
      case 'list':
        return print((await call('lists.list', {})) as ListSummary[], (r) => formatListSummaries(r, language));
      case 'show':
        return print((await call('lists.show', { ...list, include_done: command.include_done })) as ListsShowResult, (r) =>
          formatListItems(r, now, command.include_done, language),
        );
      case 'add':
        return print((await call('lists.add', { ...list, item: command.item })) as AddResult, (r) => formatAdded(r, language));
      case 'done':
        return print((await call('lists.complete', { ...list, item: command.item })) as ListChange, (r) => w.ticked(r.item.text, r.list));
      case 'remove':
        return print((await call('lists.remove', { ...list, item: command.item })) as ListChange, (r) => w.removed(r.item.text, r.list));
    }
  });
}

// ---- readable output ----

/** "the shopping list" in English; a Chinese list's name ends in 清单 or 列表 already, else 清单 is added. */
function listName(name: string, language: Language): string {
  if (language === 'en') return describeList(name);
  return /(?:清单|列表|\blist)$/iu.test(name) ? `“${name}”` : `“${name}”清单`;
}

/** Every sentence the lists command prints, in both languages. */
const WORDS = {
  en: {
    header: ['LIST', 'OPEN', 'DONE'],
    empty: (list: string, includeDone: boolean) => `${listName(list, 'en')} has no ${includeDone ? '' : 'open '}items`,
    doneAgo: (ago: string) => `done ${ago}`,
    added: (item: string, list: string) => `added ${item} to ${listName(list, 'en')}`,
    already: (item: string, list: string) => `${item} is already on ${listName(list, 'en')}`,
    ticked: (item: string, list: string) => `ticked off ${item} on ${listName(list, 'en')}`,
    removed: (item: string, list: string) => `removed ${item} from ${listName(list, 'en')}`,
  },
  zh: {
    header: ['清单', '未完成', '已完成'],
    empty: (list: string, includeDone: boolean) => `${listName(list, 'zh')}里没有${includeDone ? '' : '未完成的'}条目`,
    doneAgo: (ago: string) => `${ago}完成`,
    added: (item: string, list: string) => `已把${item}加到${listName(list, 'zh')}`,
    already: (item: string, list: string) => `${item}已经在${listName(list, 'zh')}里了`,
    ticked: (item: string, list: string) => `已在${listName(list, 'zh')}勾掉${item}`,
    removed: (item: string, list: string) => `已从${listName(list, 'zh')}删除${item}`,
  },
} as const;

export function formatListSummaries(lists: ListSummary[], language: Language = cliLanguage()): string {
  return table([[...WORDS[language].header], ...lists.map((l) => [l.name, String(l.open), String(l.done)])], '');
}

/** The list's name, then one line per item: "☐ milk", "☑ eggs (done 2h ago)". */
export function formatListItems(r: ListsShowResult, now: number, includeDone: boolean, language: Language = cliLanguage()): string {
  if (r.items.length === 0) return WORDS[language].empty(r.list, includeDone);
  return [`${r.list}${language === 'zh' ? '：' : ':'}`, ...r.items.map((item) => `  ${itemLine(item, now, language)}`)].join('\n');
}

export function itemLine(item: ListItem, now: number, language: Language = cliLanguage()): string {
  if (!item.done) return `☐ ${item.text}`;
  if (item.done_at === null) return `☑ ${item.text}`;
  const done = WORDS[language].doneAgo(agoIn(item.done_at, now, language));
  return language === 'zh' ? `☑ ${item.text}（${done}）` : `☑ ${item.text} (${done})`;
}

export function formatAdded(r: AddResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  return r.added ? w.added(r.item.text, r.list) : w.already(r.item.text, r.list);
}
