/**
 * How far each remembered event may be trusted (the `event_trust` table): the sender's trust when
 * the input is recorded, lowered when its turn finishes to the lowest trust of what entered it (a
 * tool's output is stored with the turn). Recall asks for the lowest trust of the events behind
 * the items it brings back, so an MQTT payload or a web page remembered yesterday cannot raise an
 * owner's turn today (docs/security.md). An event without a row, or an item without events, is
 * untrusted: what memory cannot vouch for it does not.
 */
import { lowerTrust, type Trust } from '../shared/trust.js';
import { StatementCache } from '../store/statement-cache.js';
import type { SqlDatabase } from '../store/types.js';

export class EventTrust {
  readonly #sql: StatementCache;

  constructor(db: SqlDatabase) {
    this.#sql = new StatementCache(db);
  }

  /** Records an event's trust; a second record only ever lowers it. */
  record(eventId: string, trust: Trust): void {
    const known = this.#get(eventId);
    const next = known === undefined ? trust : lowerTrust(known, trust);
    if (next === known) return;
    this.#sql
      .get('INSERT INTO event_trust (event_id, trust) VALUES (?, ?) ON CONFLICT (event_id) DO UPDATE SET trust = excluded.trust')
      .run(eventId, next);
  }

  /** The lowest trust of the events of every item (`owner` for no items; an item without events is untrusted). */
  lowest(items: ReadonlyArray<{ sources: readonly string[] }>): Trust {
    let trust: Trust = 'owner';
    for (const item of items) {
      if (item.sources.length === 0) return 'untrusted';
      for (const id of item.sources) {
        trust = lowerTrust(trust, this.#get(id) ?? 'untrusted');
        if (trust === 'untrusted') return trust;
      }
    }
    return trust;
  }

  #get(eventId: string): Trust | undefined {
    const row = this.#sql.get('SELECT trust FROM event_trust WHERE event_id = ?').get(eventId) as { trust: Trust } | undefined;
    return row?.trust;
  }
}
