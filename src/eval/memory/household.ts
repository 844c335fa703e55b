/**
 * `homeagent memory-eval --household DIR`: scripted household logs (test/fixtures/memory-household)
 * fed through the memory calls the agent makes for each turn (recordInput, then remember with what
 * the agent hands over: the model's answer, or '' when the kernel answered; every tool result
 * under its tool's memory policy, built-in tools having no cleaner), with the household's people
 * configured, then asked as the prompt asks recall. Each household gets a fresh memory.db.
 *
 * Scores, per part (a subdirectory: `tune`, `heldout`) and language:
 * - fact@1 / fact@3: the first (first three) items state the current answer, not as history;
 * - stale: a question whose fact was corrected, where an item stating the old value, not marked
 *   as history, ranks above the first item stating the current one (or none states it);
 * - noise share: characters of tool JSON, offline notices and "no record" notes in what recall
 *   returns, over all characters returned;
 * - abstention: questions about things never said for which recall abstains;
 * - prompt characters: mean characters of the prompt block.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogManager } from '../../log/logger.js';
import type { HouseholdPerson } from '../../memory/household-people.js';
import { MemoryService } from '../../memory/memory-service.js';
import type { Clock } from '../../shared/clock.js';
import { Store } from '../../store/store.js';
import { evalError } from './eval-error.js';

interface Turn {
  at: number;
  sender_id: string;
  source: string;
  channel: string;
  peer: string;
  area?: string;
  text: string;
  answer: string;
  by: 'model' | 'kernel';
  tools: Array<{ tool: string; text: string }>;
}

interface Question {
  sender_id: string;
  source: string;
  channel: string;
  peer: string;
  area?: string;
  ask: string;
  answer?: string;
  stale?: string;
  past?: boolean;
  unknown?: boolean;
}

interface Household {
  name: string;
  language: 'en' | 'zh';
  people: HouseholdPerson[];
  asked_at: number;
  facts: number;
  log: Turn[];
  questions: Question[];
}

export interface HouseholdScore {
  part: string;
  language: string;
  households: number;
  facts: number;
  questions: number;
  fact1: number;
  fact3: number;
  stale: number;
  noise: number;
  abstention: number;
  prompt_chars: number;
}

/** What tool results look like when they are no memory (JSON, notices, memory's own notes). */
const NOISE = /\{"[\s\S]*?\}|no language model|没有配置语言模型|no record|没有这方面的记录/g;

/** Questions about facts asked of each household, before which its memory is settled. */
export async function runHouseholdEval(dir: string, logs: LogManager): Promise<HouseholdScore[]> {
  const parts = readdirSync(dir).filter((p) => statSync(join(dir, p)).isDirectory());
  if (parts.length === 0) throw evalError(`${dir} has no part directories (tune/, heldout/) of household logs`);
  const rows: HouseholdScore[] = [];
  for (const part of parts.sort()) {
    const households = readdirSync(join(dir, part))
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(join(dir, part, f), 'utf8')) as Household);
    for (const language of ['en', 'zh', 'all']) {
      const chosen = households.filter((h) => language === 'all' || h.language === language);
      if (chosen.length === 0) continue;
      const tally = {
        q: 0,
        fact1: 0,
        fact3: 0,
        known: 0,
        staleQ: 0,
        stale: 0,
        noise: 0,
        chars: 0,
        unknown: 0,
        abstained: 0,
        prompt: 0,
        facts: 0,
      };
      for (const h of chosen) await scoreHousehold(h, logs, tally);
      rows.push({
        part,
        language,
        households: chosen.length,
        facts: tally.facts,
        questions: tally.q,
        fact1: tally.fact1 / Math.max(1, tally.known),
        fact3: tally.fact3 / Math.max(1, tally.known),
        stale: tally.stale / Math.max(1, tally.staleQ),
        noise: tally.noise / Math.max(1, tally.chars),
        abstention: tally.abstained / Math.max(1, tally.unknown),
        prompt_chars: tally.prompt / Math.max(1, tally.q),
      });
    }
  }
  return rows;
}

async function scoreHousehold(h: Household, logs: LogManager, tally: Record<string, number>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ha-household-eval-'));
  let now = 0;
  const clock: Clock = { now: () => now, monotonic: () => performance.now() };
  const log = logs.child('memory-eval');
  const store = new Store({
    databases: [{ name: 'memory', file: join(dir, 'memory.db'), synchronous: 'NORMAL' }],
    busyTimeoutMs: 5000,
    startupCheck: 'off',
    log,
    clock,
  });
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => ({ max_context_size: 30, prompt_documents: 5 }),
    people: () => h.people,
    // The built-in tools these logs call (entity_call, timer_set, list_add, memory_recall) have no
    // cleaner: their results are no memory, as in the daemon.
    toolPolicy: () => undefined,
    timers: { set: () => undefined, clear: () => {} },
    clock,
    log,
  });
  await store.start();
  await memory.start();
  try {
    tally.facts = (tally.facts ?? 0) + h.facts;
    for (const [i, turn] of h.log.entries()) {
      now = turn.at;
      const input = {
        id: `${h.name}-${i}`,
        timestamp: turn.at,
        source: turn.source,
        channel: turn.channel,
        peer: turn.peer,
        sender_id: turn.sender_id,
        ...(turn.area !== undefined && { area: turn.area }),
        input: turn.text,
        trust: 'owner' as const,
      };
      await memory.recordInput(input);
      await memory.remember({ ...input, response: turn.by === 'model' ? turn.answer : '', tools: turn.tools });
    }
    now = h.asked_at;
    await memory.parts().maintenance.runAll();
    for (const [i, q] of h.questions.entries()) {
      const result = await memory.parts().recall.recall(q.ask, 5, { exclude: [`${h.name}-q${i}`] });
      const block = (await memory.recallBlock(q.ask)) ?? { text: '' };
      tally.q = (tally.q ?? 0) + 1;
      tally.prompt = (tally.prompt ?? 0) + block.text.length;
      for (const item of result.items) {
        tally.chars = (tally.chars ?? 0) + item.text.length;
        tally.noise = (tally.noise ?? 0) + (item.text.match(NOISE) ?? []).join('').length;
      }
      if (q.unknown) {
        tally.unknown = (tally.unknown ?? 0) + 1;
        if (result.abstain) tally.abstained = (tally.abstained ?? 0) + 1;
        continue;
      }
      const answer = (q.answer ?? '').toLowerCase();
      const states = (text: string, superseded: boolean | undefined) =>
        text.toLowerCase().includes(answer) && (q.past === true || !superseded);
      const first = result.items.findIndex((item) => states(item.text, item.superseded));
      tally.known = (tally.known ?? 0) + 1;
      if (first === 0) tally.fact1 = (tally.fact1 ?? 0) + 1;
      if (first >= 0 && first < 3) tally.fact3 = (tally.fact3 ?? 0) + 1;
      if (q.stale && !q.past) {
        const old = q.stale.toLowerCase();
        tally.staleQ = (tally.staleQ ?? 0) + 1;
        const staleAt = result.items.findIndex(
          (item) => !item.superseded && item.text.toLowerCase().includes(old) && !item.text.toLowerCase().includes(answer),
        );
        if (staleAt >= 0 && (first < 0 || staleAt < first)) tally.stale = (tally.stale ?? 0) + 1;
      }
    }
  } finally {
    await memory.stop();
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The scores as a table, each part apart. */
export function householdTable(rows: readonly HouseholdScore[]): string {
  const pct = (n: number) => n.toFixed(3);
  const header = 'part      lang  households  facts  questions  fact@1  fact@3  stale  noise  abstention  prompt chars';
  const lines = rows.map(
    (r) =>
      `${r.part.padEnd(9)} ${r.language.padEnd(5)} ${String(r.households).padStart(10)}  ${String(r.facts).padStart(5)}  ${String(r.questions).padStart(9)}  ${pct(r.fact1).padStart(6)}  ${pct(r.fact3).padStart(6)}  ${pct(r.stale).padStart(5)}  ${pct(r.noise).padStart(5)}  ${pct(r.abstention).padStart(10)}  ${r.prompt_chars.toFixed(0).padStart(12)}`,
  );
  return [header, ...lines].join('\n');
}
