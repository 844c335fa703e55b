/**
 * A real list store over the state database of a real, started Store in the test's directory,
 * with a clock the test moves, and a restart that stops the Store and opens the same file again.
 */
import { LIST_DEFAULTS, type ListSettings, ListStore } from '../../../src/lists/list-store.js';
import type { Store } from '../../../src/store/store.js';
import { startStore } from '../fixtures/support.js';

export const T0 = Date.parse('2026-03-01T09:00:00.000Z');
export const DAY_MS = 86_400_000;

export interface ListSetup {
  lists: ListStore;
  settings: ListSettings;
  clock: { now(): number; advance(ms: number): void };
  file: string;
  /** Stops the Store (closing the database) and returns a new ListStore on a new Store over the same file. */
  restart(): Promise<ListStore>;
}

interface Testdir {
  testdir(): string;
  teardown(fn: () => void | Promise<void>): void;
}

export async function openLists(t: Testdir, overrides: Partial<ListSettings> = {}): Promise<ListSetup> {
  const dir = t.testdir();
  const settings: ListSettings = { ...LIST_DEFAULTS, ...overrides };
  let now = T0;
  const clock = {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
  let { store, file } = await startStore(t, dir);
  const make = (s: Store) => new ListStore({ database: () => s.database('state'), settings: () => settings, clock });
  return {
    lists: make(store),
    settings,
    clock,
    file,
    restart: async () => {
      await store.stop();
      ({ store, file } = await startStore(t, dir));
      return make(store);
    },
  };
}
