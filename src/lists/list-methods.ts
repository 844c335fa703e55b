/**
 * Control methods for the shopping and to-do lists (`lists.list`, `lists.show`, `lists.add`,
 * `lists.complete`, `lists.remove`), used by `homeagentctl lists`: whoever looks after the box
 * over SSH can read and change the lists even when no language model is reachable. Every change is
 * audited here with the caller as actor, also when it fails (the store audits nothing). Store
 * refusals pass through unchanged as their HA_ERR_LIST_* errors, whose messages already name the
 * problem and the lists there are.
 */
import { Type } from '@sinclair/typebox';
import type { AuditRecord } from '../log/logger.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { describeError } from '../shared/errors.js';
import { type AddResult, type ListChange, type ListItem, ListStore, type ListSummary } from './list-store.js';

export interface ListMethodOptions {
  /** The LogManager: every change writes an audit record. */
  logs: { audit(record: AuditRecord): void };
}

/** The answer of `lists.show`. */
export interface ListsShowResult {
  /** The list's stored name (which the name asked for resolved to). */
  list: string;
  items: ListItem[];
}

/**
 * What the schema lets through; the store applies its own, clearer bounds on top (a list's name
 * at most 64 characters, an item core.lists.max_item_chars) and refuses blank text.
 */
const MAX_PARAM_CHARS = 1000;

const ListName = Type.String({
  minLength: 1,
  maxLength: MAX_PARAM_CHARS,
  description: `The list's name ("to-do", "hardware store", "购物清单"); default the ${ListStore.SHOPPING}.`,
});
const Item = Type.String({ minLength: 1, maxLength: MAX_PARAM_CHARS, description: 'One item, or part of its text to find it.' });
// A misspelt parameter (include_Done, items) would otherwise be ignored silently.
const ItemParams = Type.Object({ list: Type.Optional(ListName), item: Item }, { additionalProperties: false });

type Change = 'add' | 'complete' | 'remove';

export function registerListMethods(control: ControlMethodRegistrar, store: ListStore, options: ListMethodOptions): void {
  /** Runs one change with its audit record: what was asked, then what it did or why it failed. */
  const audited = <R extends ListChange>(change: Change, actor: string, list: string, item: string, run: () => R): R => {
    const audit = { actor, action: `lists.${change}`, list, item };
    try {
      const result = run();
      options.logs.audit({
        ...audit,
        list_name: result.list,
        item_id: result.item.id,
        item_text: result.item.text,
        ...('added' in result && { added: result.added }),
      });
      return result;
    } catch (error) {
      options.logs.audit({ ...audit, error: describeError(error) });
      throw error;
    }
  };

  control.register({
    name: 'lists.list',
    description: `Every list with its open and done item counts, in the order they were made; the ${ListStore.SHOPPING} is always there.`,
    params: Type.Object({}, { additionalProperties: false }),
    handler: (): ListSummary[] => store.lists(),
  });

  control.register({
    name: 'lists.show',
    description: `A list's open items in the order they were added (default the ${ListStore.SHOPPING}); include_done adds the done ones, in the order they were done.`,
    params: Type.Object(
      {
        list: Type.Optional(ListName),
        include_done: Type.Optional(Type.Boolean({ description: 'Also the items already done (default false).' })),
      },
      { additionalProperties: false },
    ),
    handler: ({ list, include_done }): ListsShowResult => {
      const asked = list ?? ListStore.SHOPPING;
      // items() refuses an unknown list with the names of those there are.
      const name = store.findList(asked) ?? asked;
      return { list: name, items: store.items(name, { include_done: include_done === true }) };
    },
  });

  control.register({
    name: 'lists.add',
    description: `Put one item on a list (default the ${ListStore.SHOPPING}; a new list is made on first use). An item already open on the list is returned with added: false.`,
    params: ItemParams,
    handler: ({ list, item }, caller): AddResult => {
      const name = list ?? ListStore.SHOPPING;
      return audited('add', caller.actor, name, item, () => store.add(name, item));
    },
  });

  control.register({
    name: 'lists.complete',
    description: 'Tick off an open item (bought, done); part of its text is enough when only one open item contains it.',
    params: ItemParams,
    handler: ({ list, item }, caller): ListChange => {
      const name = list ?? ListStore.SHOPPING;
      return audited('complete', caller.actor, name, item, () => store.complete(name, item));
    },
  });

  control.register({
    name: 'lists.remove',
    description: 'Delete an item from a list: an open one the text refers to, else a done one.',
    params: ItemParams,
    handler: ({ list, item }, caller): ListChange => {
      const name = list ?? ListStore.SHOPPING;
      return audited('remove', caller.actor, name, item, () => store.remove(name, item));
    },
  });
}
