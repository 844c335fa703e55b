/**
 * Shopping and to-do lists: the store behind the intents "add milk to the shopping list", "milk
 * is done" and the model's list tools. Lists are created on first use and found by a forgiving
 * key (list-text.ts), so "groceries", "the groceries list" and "Groceries" are one list.
 *
 * Items are matched the way people refer to them: the exact item first (case, width, surrounding
 * spaces and trailing punctuation ignored), else the single item containing the words said;
 * several such items are ambiguous rather than a guess, because ticking off the wrong item is
 * worse than asking. Done items stay (shown on request) until maintain() drops those older than
 * core.lists.keep_done_days, or a full list needs their room.
 *
 * The shopping list is the default the intents and tools fall back to, so it always exists for
 * reading, even before anything was put on it; other lists appear when their first item is added.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { ManagedDatabase } from '../store/database.js';
import type { SqlDatabase, SqlStatement } from '../store/types.js';
import { openListDatabase } from './list-schema.js';
import { cleanText, itemKey, listKey, type TextProblem, textProblem } from './list-text.js';

/** core.lists as the store reads it (on every use, so changes apply without a restart). */
export interface ListSettings {
  /** Lists at most; adding to a new list beyond it is refused. */
  max_lists: number;
  /** Items (open and done) per list at most; the oldest done items make room first. */
  max_items_per_list: number;
  /** Characters at most in an item. */
  max_item_chars: number;
  /** Done items older than this are dropped by maintain(). */
  keep_done_days: number;
}

export const LIST_DEFAULTS: ListSettings = { max_lists: 50, max_items_per_list: 500, max_item_chars: 200, keep_done_days: 30 };

export interface ListStoreOptions {
  /** The `state` database, asked for on first use (the store opens it at start) and migrated then. */
  database: () => ManagedDatabase;
  settings: () => ListSettings;
  clock: { now(): number };
}

export interface ListItem {
  id: number;
  text: string;
  done: boolean;
  /** Epoch ms. */
  added_at: number;
  /** Epoch ms, null while open. */
  done_at: number | null;
}

export interface ListSummary {
  name: string;
  open: number;
  done: number;
}

export interface ListChange {
  /** The list's stored name (which the caller's name resolved to). */
  list: string;
  item: ListItem;
}

export interface AddResult extends ListChange {
  /** False when the item was already open on the list (it is returned, not added again). */
  added: boolean;
}

const DAY_MS = 86_400_000;
/** A list's name is a name, not content: like an entity's name, its bound is fixed rather than a setting. */
export const MAX_LIST_NAME_CHARS = 64;
/** Keys that mean the shopping list even before it is stored ("shopping", "购物清单", "购物单"). */
const SHOPPING_KEYS = new Set(['shopping', '购物', '购物单']);

interface ListRow {
  id: number;
  name: string;
}

interface ItemRow {
  id: number;
  text: string;
  key: string;
  done: number;
  added_at: number;
  done_at: number | null;
}

interface Statements {
  listByKey: SqlStatement;
  listNames: SqlStatement;
  listCount: SqlStatement;
  insertList: SqlStatement;
  summaries: SqlStatement;
  items: SqlStatement;
  openByKey: SqlStatement;
  itemCount: SqlStatement;
  oldestDone: SqlStatement;
  insertItem: SqlStatement;
  markDone: SqlStatement;
  deleteItem: SqlStatement;
  dropDoneBefore: SqlStatement;
}

export class ListStore {
  /** The default list: the shopping-list intents and the tools without a list use it. */
  static readonly SHOPPING = 'shopping list';

  readonly #options: ListStoreOptions;
  #db: SqlDatabase | undefined;
  #sql: Statements | undefined;

  constructor(options: ListStoreOptions) {
    this.#options = options;
  }

  /**
   * Puts an item on a list, creating the list on first use. An item already open on the list
   * (compared by its key) is returned as it is, with `added: false`.
   */
  add(list: string, item: string): AddResult {
    const settings = this.#options.settings();
    const text = checkedText(item, 'item', settings.max_item_chars);
    const key = itemKey(text);
    const sql = this.#statements();
    return this.#transaction(() => {
      const row = this.#listForWriting(list, settings);
      const open = sql.openByKey.get(row.id, key) as ItemRow | undefined;
      if (open !== undefined) return { list: row.name, item: toItem(open), added: false };
      this.#makeRoom(row, settings.max_items_per_list);
      const now = this.#options.clock.now();
      const id = Number(sql.insertItem.run(row.id, text, key, now).lastInsertRowid);
      return { list: row.name, item: { id, text, done: false, added_at: now, done_at: null }, added: true };
    });
  }

  /** Marks the open item the text refers to as done (see the module comment for the matching). */
  complete(list: string, item: string): ListChange {
    const settings = this.#options.settings();
    const key = itemKey(checkedText(item, 'item', settings.max_item_chars));
    const sql = this.#statements();
    return this.#transaction(() => {
      const row = this.#existingList(list);
      const target = this.#match(row, key, false, item);
      if (target === undefined) {
        const alreadyDone = this.#itemRows(row).some((r) => r.done === 1 && r.key === key);
        throw noItem(row, item, alreadyDone);
      }
      const now = this.#options.clock.now();
      sql.markDone.run(now, target.id);
      return { list: row.name, item: { ...toItem(target), done: true, done_at: now } };
    });
  }

  /** Deletes the item the text refers to: an open one if any matches, else a done one. */
  remove(list: string, item: string): ListChange {
    const settings = this.#options.settings();
    const key = itemKey(checkedText(item, 'item', settings.max_item_chars));
    const sql = this.#statements();
    return this.#transaction(() => {
      const row = this.#existingList(list);
      const target = this.#match(row, key, false, item) ?? this.#match(row, key, true, item);
      if (target === undefined) throw noItem(row, item, false, '');
      sql.deleteItem.run(target.id);
      return { list: row.name, item: toItem(target) };
    });
  }

  /** The open items in the order they were added, then (on request) the done ones in the order they were done. */
  items(list: string, options: { include_done?: boolean } = {}): ListItem[] {
    const rows = this.#itemRows(this.#existingList(list));
    const open = rows.filter((r) => r.done === 0);
    const done = options.include_done === true ? rows.filter((r) => r.done === 1).sort(byDoneAt) : [];
    return [...open, ...done].map(toItem);
  }

  /** Every list with its counts, in the order they were created; the shopping list is always there. */
  lists(): ListSummary[] {
    const rows = this.#statements().summaries.all() as ListSummary[];
    if (rows.some((r) => r.name === ListStore.SHOPPING)) return rows;
    return [{ name: ListStore.SHOPPING, open: 0, done: 0 }, ...rows];
  }

  /**
   * The stored name of the list a spoken or written name refers to ("groceries" → "groceries
   * list", "待办" → "待办清单"), or undefined. Names of the shopping list ("shopping", "购物清单",
   * "购物单", "购物") find it even before it is stored.
   */
  findList(name: string): string | undefined {
    const key = listKey(name);
    if (key === '') return undefined;
    const row = this.#statements().listByKey.get(key) as ListRow | undefined;
    if (row !== undefined) return row.name;
    return SHOPPING_KEYS.has(key) ? ListStore.SHOPPING : undefined;
  }

  /** Drops the done items older than core.lists.keep_done_days; returns how many. */
  maintain(): number {
    const cutoff = this.#options.clock.now() - this.#options.settings().keep_done_days * DAY_MS;
    return this.#statements().dropDoneBefore.run(cutoff).changes;
  }

  /** The list `name` refers to; the shopping list when not stored yet (id -1, no items); else not found. */
  #existingList(name: string): ListRow {
    checkedText(name, 'list', MAX_LIST_NAME_CHARS);
    const row = this.#storedList(name);
    if (row !== undefined) return row;
    if (SHOPPING_KEYS.has(listKey(name))) return { id: -1, name: ListStore.SHOPPING };
    const names = (this.#statements().listNames.all() as ListRow[]).map((r) => r.name);
    if (!names.includes(ListStore.SHOPPING)) names.unshift(ListStore.SHOPPING);
    throw new HomeAgentError(
      'HA_ERR_LIST_NOT_FOUND',
      `no list is called ${JSON.stringify(cleanText(name))}; the lists are: ${names.join(', ')}`,
      {
        details: { field: 'list', lists: names },
      },
    );
  }

  /** The list `name` refers to, created when new (the shopping list under its own name). */
  #listForWriting(name: string, settings: ListSettings): ListRow {
    const clean = checkedText(name, 'list', MAX_LIST_NAME_CHARS);
    const existing = this.#storedList(clean);
    if (existing !== undefined) return existing;
    const key = listKey(clean);
    if (key === '') throw invalid('list', 'empty', MAX_LIST_NAME_CHARS);
    const sql = this.#statements();
    const count = (sql.listCount.get() as { n: number }).n;
    if (count >= settings.max_lists) {
      throw new HomeAgentError(
        'HA_ERR_LIST_FULL',
        `there are already ${count} lists, the limit (core.lists.max_lists); add ${JSON.stringify(clean)} to one of them instead`,
        { details: { field: 'list', limit: settings.max_lists } },
      );
    }
    const shopping = SHOPPING_KEYS.has(key);
    const stored = shopping ? ListStore.SHOPPING : clean;
    const id = Number(sql.insertList.run(stored, shopping ? listKey(ListStore.SHOPPING) : key, this.#options.clock.now()).lastInsertRowid);
    return { id, name: stored };
  }

  #storedList(name: string): ListRow | undefined {
    const key = listKey(name);
    const sql = this.#statements();
    const row = sql.listByKey.get(key) as ListRow | undefined;
    if (row !== undefined || !SHOPPING_KEYS.has(key)) return row;
    return sql.listByKey.get(listKey(ListStore.SHOPPING)) as ListRow | undefined;
  }

  /** Deletes the oldest done items while the list is at its limit; refuses when only open items fill it. */
  #makeRoom(row: ListRow, limit: number): void {
    const sql = this.#statements();
    const count = (sql.itemCount.get(row.id) as { n: number }).n;
    if (count < limit) return;
    const done = sql.oldestDone.all(row.id, count - limit + 1) as Array<{ id: number }>;
    if (count - done.length >= limit) {
      throw new HomeAgentError(
        'HA_ERR_LIST_FULL',
        `${describeList(row.name)} has ${limit} open items, the limit (core.lists.max_items_per_list); remove or complete some first`,
        { details: { field: 'item', limit } },
      );
    }
    for (const d of done) sql.deleteItem.run(d.id);
  }

  /** The item `key` refers to among the open (or done) items; throws when several fit equally. */
  #match(row: ListRow, key: string, done: boolean, said: string): ItemRow | undefined {
    const candidates = this.#itemRows(row).filter((r) => (r.done === 1) === done);
    const exact = candidates.filter((r) => r.key === key);
    if (exact.length > 0) return newest(exact);
    const containing = candidates.filter((r) => r.key.includes(key));
    if (containing.length === 0) return undefined;
    if (new Set(containing.map((r) => r.key)).size === 1) return newest(containing);
    const texts = [...new Set(containing.map((r) => r.text))];
    throw new HomeAgentError(
      'HA_ERR_LIST_AMBIGUOUS',
      `${JSON.stringify(cleanText(said))} matches ${texts.length} ${done ? 'done' : 'open'} items on ${describeList(row.name)}: ${texts.join(', ')}`,
      { details: { field: 'item', candidates: texts } },
    );
  }

  #itemRows(row: ListRow): ItemRow[] {
    return row.id < 0 ? [] : (this.#statements().items.all(row.id) as ItemRow[]);
  }

  #transaction<T>(fn: () => T): T {
    return (this.#db ?? this.#connect()).transaction(fn)();
  }

  #connect(): SqlDatabase {
    this.#db = openListDatabase(this.#options.database());
    return this.#db;
  }

  #statements(): Statements {
    if (this.#sql !== undefined) return this.#sql;
    const db = this.#db ?? this.#connect();
    this.#sql = {
      listByKey: db.prepare('SELECT id, name FROM lists WHERE key = ?'),
      listNames: db.prepare('SELECT id, name FROM lists ORDER BY id'),
      listCount: db.prepare('SELECT COUNT(*) AS n FROM lists'),
      insertList: db.prepare('INSERT INTO lists (name, key, created_at) VALUES (?, ?, ?)'),
      summaries: db.prepare(
        `SELECT l.name AS name, COUNT(i.id) - COALESCE(SUM(i.done), 0) AS open, COALESCE(SUM(i.done), 0) AS done
         FROM lists l LEFT JOIN list_items i ON i.list_id = l.id GROUP BY l.id ORDER BY l.id`,
      ),
      items: db.prepare('SELECT id, text, key, done, added_at, done_at FROM list_items WHERE list_id = ? ORDER BY id'),
      openByKey: db.prepare('SELECT id, text, key, done, added_at, done_at FROM list_items WHERE list_id = ? AND key = ? AND done = 0'),
      itemCount: db.prepare('SELECT COUNT(*) AS n FROM list_items WHERE list_id = ?'),
      oldestDone: db.prepare('SELECT id FROM list_items WHERE list_id = ? AND done = 1 ORDER BY done_at, id LIMIT ?'),
      insertItem: db.prepare('INSERT INTO list_items (list_id, text, key, done, added_at) VALUES (?, ?, ?, 0, ?)'),
      markDone: db.prepare('UPDATE list_items SET done = 1, done_at = ? WHERE id = ?'),
      deleteItem: db.prepare('DELETE FROM list_items WHERE id = ?'),
      dropDoneBefore: db.prepare('DELETE FROM list_items WHERE done = 1 AND done_at < ?'),
    };
    return this.#sql;
  }
}

/** "the shopping list", "the 购物清单", "the groceries list". */
export function describeList(name: string): string {
  return /(?:\blist|清单|列表)$/iu.test(name) ? `the ${name}` : `the ${name} list`;
}

/** The cleaned text, or HA_ERR_LIST_INVALID naming the field and the problem. */
function checkedText(text: unknown, field: 'item' | 'list', maxChars: number): string {
  if (typeof text !== 'string') throw invalid(field, 'empty', maxChars);
  const clean = cleanText(text);
  const problem = textProblem(clean, maxChars);
  if (problem !== undefined) throw invalid(field, problem, maxChars);
  return clean;
}

function invalid(field: 'item' | 'list', problem: TextProblem, maxChars: number): HomeAgentError {
  const what = field === 'item' ? 'the item' : "the list's name";
  const message = {
    empty: `${what} is empty`,
    too_long: `${what} is longer than ${maxChars} characters${field === 'item' ? ' (core.lists.max_item_chars)' : ''}`,
    control_characters: `${what} contains control characters`,
  }[problem];
  return new HomeAgentError('HA_ERR_LIST_INVALID', message, {
    details: { field, problem, ...(problem === 'too_long' && { limit: maxChars }) },
  });
}

function noItem(row: ListRow, said: string, alreadyDone: boolean, state = 'open '): HomeAgentError {
  const note = alreadyDone ? ' (it is already done)' : '';
  return new HomeAgentError(
    'HA_ERR_LIST_NOT_FOUND',
    `no ${state}item ${JSON.stringify(cleanText(said))} on ${describeList(row.name)}${note}`,
    {
      details: { field: 'item', list: row.name, already_done: alreadyDone },
    },
  );
}

function toItem(row: ItemRow): ListItem {
  return { id: row.id, text: row.text, done: row.done === 1, added_at: row.added_at, done_at: row.done_at };
}

function newest(rows: readonly ItemRow[]): ItemRow {
  return rows.reduce((a, b) => (b.id > a.id ? b : a));
}

function byDoneAt(a: ItemRow, b: ItemRow): number {
  return (a.done_at ?? 0) - (b.done_at ?? 0) || a.id - b.id;
}
