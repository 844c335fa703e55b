/**
 * The tools the model uses on shopping and to-do lists: add, complete, show and remove items. They
 * share the list store with the local intents, so "add milk" said to the speaker and "put milk on
 * the list" typed in chat land on the same list. Without `list`, every tool works on the shopping
 * list; list_show always names the other lists too, so the model can find the one meant.
 */

import { describeError, HomeAgentError } from '../shared/errors.js';
import { type ToolDefinition, ToolError } from '../shared/tool.js';
import { optionalText, requiredText, type ToolArgs } from '../shared/tool-args.js';
import { type ListItem, ListStore } from './list-store.js';

export const LIST_TOOL_OWNER = 'core';
/** What the schema lets through; the store applies core.lists.max_item_chars on top. */
const MAX_ARG_CHARS = 1000;

const LIST_ARG = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_ARG_CHARS,
  description: 'The list\'s name ("shopping list", "to-do", "hardware store", "购物清单"); default the shopping list.',
};
const ITEM_ARG = { type: 'string', minLength: 1, maxLength: MAX_ARG_CHARS };

function itemParameters(itemDescription: string) {
  return {
    type: 'object',
    properties: { list: LIST_ARG, item: { ...ITEM_ARG, description: itemDescription } },
    required: ['item'],
    additionalProperties: false,
  };
}

export function listTools(store: ListStore): ToolDefinition[] {
  return [
    {
      name: 'list_add',
      owner: LIST_TOOL_OWNER,
      tier: 'act',
      description:
        'Put one item on a shopping or to-do list (created on first use). An item already open on the list is not added twice. ' +
        'Call once per item.',
      parameters: itemParameters('One item, as the person said it ("milk", "2 kg rice", "call the plumber", "牛奶").'),
      execute: (args: ToolArgs) => {
        const { list, item } = itemArgs(args);
        const result = guarded(() => store.add(list, item));
        return { list: result.list, item: compact(result.item), added: result.added };
      },
    },
    {
      name: 'list_complete',
      owner: LIST_TOOL_OWNER,
      tier: 'act',
      description: 'Tick off an open item on a list (bought, done). Part of its text is enough when only one item contains it.',
      parameters: itemParameters('The item or part of its text ("milk" finds "oat milk" when no other item contains "milk").'),
      execute: (args: ToolArgs) => {
        const { list, item } = itemArgs(args);
        const result = guarded(() => store.complete(list, item));
        return { list: result.list, item: compact(result.item) };
      },
    },
    {
      name: 'list_show',
      owner: LIST_TOOL_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description: "A list's open items (and, on request, the done ones), with the names and counts of all lists.",
      parameters: {
        type: 'object',
        properties: {
          list: LIST_ARG,
          include_done: { type: 'boolean', description: 'Also the items already done (default false).' },
        },
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const list = listArg(args);
        const includeDone = args.include_done;
        if (includeDone !== undefined && includeDone !== null && typeof includeDone !== 'boolean') {
          throw new ToolError({
            reason: 'type',
            field: 'include_done',
            detail: 'include_done must be true or false',
            hint: 'or leave it out',
          });
        }
        const name = store.findList(list) ?? list;
        const items = guarded(() => store.items(name, { include_done: includeDone === true }));
        return { list: name, items: items.map(compact), lists: store.lists() };
      },
    },
    {
      name: 'list_remove',
      owner: LIST_TOOL_OWNER,
      tier: 'act',
      description: 'Delete an item from a list (added by mistake, no longer wanted). To mark it bought or done, use list_complete.',
      parameters: itemParameters('The item or part of its text.'),
      execute: (args: ToolArgs) => {
        const { list, item } = itemArgs(args);
        const result = guarded(() => store.remove(list, item));
        return { list: result.list, removed: result.item.text };
      },
    },
  ];
}

function listArg(args: ToolArgs): string {
  return optionalText(args, 'list', 'pass a list name, or leave list out for the shopping list', MAX_ARG_CHARS) ?? ListStore.SHOPPING;
}

function itemArgs(args: ToolArgs): { list: string; item: string } {
  const item = requiredText(args, 'item', 'pass one item, e.g. "milk"', MAX_ARG_CHARS);
  return { list: listArg(args), item };
}

/** The item as the model reads it: text, state, and when it was done. */
function compact(item: ListItem) {
  return { text: item.text, done: item.done, ...(item.done_at !== null && { done_at: new Date(item.done_at).toISOString() }) };
}

function guarded<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw toolError(error);
  }
}

/** A store failure as the model reads it. */
function toolError(error: unknown): ToolError {
  if (!(error instanceof HomeAgentError)) return new ToolError({ reason: 'failed', detail: describeError(error) });
  const detail = error.message;
  const field = typeof error.details?.field === 'string' ? error.details.field : undefined;
  const at = field === undefined ? {} : { field };
  switch (error.code) {
    case 'HA_ERR_LIST_INVALID': {
      const problem = error.details?.problem;
      const reason = problem === 'empty' ? 'required' : problem === 'too_long' ? 'range' : 'format';
      return new ToolError({ reason, ...at, detail, hint: field === 'list' ? 'pass a short list name' : 'pass one short item' });
    }
    case 'HA_ERR_LIST_FULL':
      return new ToolError({
        reason: 'rejected',
        ...at,
        detail,
        hint: field === 'list' ? 'call list_show to see the lists and use one of them' : 'tell the person; list_remove frees room',
      });
    case 'HA_ERR_LIST_NOT_FOUND':
      return new ToolError({
        reason: 'not_found',
        ...at,
        detail,
        hint: field === 'list' ? 'use one of the lists named, or list_add to start a new one' : 'call list_show to see the items',
      });
    case 'HA_ERR_LIST_AMBIGUOUS': {
      const candidates = (error.details?.candidates as string[] | undefined) ?? [];
      return new ToolError({ reason: 'rejected', ...at, detail, hint: `pass the whole item: one of ${candidates.join(', ')}` });
    }
    default:
      return new ToolError({ reason: 'failed', detail: describeError(error) });
  }
}
