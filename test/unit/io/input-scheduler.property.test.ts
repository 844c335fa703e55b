/**
 * Property test: random submits (levels, origins, duplicates) against runners with random step
 * patterns (LLM requests, critical sections, plain steps, with or without safe points, success
 * or failure), driven by a seeded PRNG. Whatever happens, every input gets exactly one terminal
 * receipt, never two tasks run at once, a task only starts over suspended ones when its level is
 * strictly higher, and the scheduler ends idle.
 */
import t from 'tap';
import type { SubmitOptions } from '../../../src/io/input-scheduler.js';
import type { InputEvent, Level, Receipt, TaskControl } from '../../../src/io/types.js';
import { OWNER } from '../../helpers/senders.js';
import { type Deferred, deferred, drain, Harness, ManualClock } from './scheduler-harness.js';

/** mulberry32: small, fast, good enough to vary the schedule; the seed is in the test name. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Step = 'llm' | 'critical' | 'plain';
interface Plan {
  steps: Step[];
  safePoints: boolean;
  fail: boolean;
}

class World {
  readonly random: () => number;
  readonly clock = new ManualClock();
  readonly h: Harness;
  readonly plans = new Map<string, Plan>();
  /** Gates the running task waits on; the driver opens them in random order. */
  readonly gates = new Set<Deferred>();
  readonly pending = new Map<string, Promise<Receipt>>();
  readonly violations: string[] = [];
  /** Inputs whose task is waiting in safePoint() (suspended ones, at the moment a task starts). */
  readonly atSafePoint = new Map<string, Level>();
  active = 0;
  stopped = false;
  submitted = 0;

  constructor(seed: number) {
    this.random = prng(seed);
    const r = this.random;
    this.h = new Harness({
      clock: this.clock,
      stopTimeoutMs: 1000,
      limits: {
        dedupe_window_ms: r() < 0.5 ? 0 : 50,
        ready_queue_size: 1 + Math.floor(r() * 5),
        interrupt_queue_size: 1 + Math.floor(r() * 5),
      },
    });
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.random() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  submit(): void {
    const id = `in${this.submitted++}`;
    const r = this.random;
    const steps: Step[] = Array.from({ length: Math.floor(r() * 4) }, () => this.pick<Step>(['llm', 'critical', 'plain']));
    const plan: Plan = { steps, safePoints: r() < 0.85, fail: r() < 0.15 };
    this.plans.set(id, plan);
    // A few payloads repeat so dedupe has something to do.
    const event: InputEvent = {
      id,
      source: this.pick(['cli', 'mqtt', 'qq']),
      channel: 'c',
      sender: OWNER,
      type: 'text',
      payload: r() < 0.3 ? `repeat ${Math.floor(r() * 3)}` : `unique ${id}`,
      meta: {},
      received_at: this.clock.at,
      level: this.pick<Level>([0, 0, 0, 1, 1, 2, 3, 4]),
    };
    const options: SubmitOptions = { origin: r() < 0.5 ? 'builtin' : 'external' };
    this.h.behaviors.set(id, (control, input) => this.run(control, input, plan));
    this.pending.set(id, this.h.submit(event, options));
  }

  async run(control: TaskControl, input: InputEvent, plan: Plan): Promise<{ text: string }> {
    this.enter(input);
    try {
      for (const step of plan.steps) {
        if (step === 'llm' && plan.safePoints) {
          for (;;) {
            await this.safePoint(control, input);
            const answer = await this.wait(control, control.llmSignal());
            if (answer !== 'aborted') break;
          }
        } else if (step === 'critical') {
          await control.critical(() => this.wait(control).then(() => undefined));
          if (plan.safePoints) await this.safePoint(control, input);
        } else {
          await this.wait(control);
          if (plan.safePoints) await this.safePoint(control, input);
        }
      }
      if (plan.fail) throw new Error(`scripted failure of ${input.id}`);
      return { text: `answer ${input.id}` };
    } finally {
      this.active--;
    }
  }

  enter(input: InputEvent): void {
    this.active++;
    if (this.stopped) return;
    if (this.active > 1) this.violations.push(`${input.id} started while another task was active`);
    for (const [other, level] of this.atSafePoint) {
      if (input.level <= level) this.violations.push(`${input.id} (L${input.level}) started over suspended ${other} (L${level})`);
    }
  }

  async safePoint(control: TaskControl, input: InputEvent): Promise<void> {
    this.active--;
    this.atSafePoint.set(input.id, input.level);
    try {
      await control.safePoint();
    } finally {
      this.atSafePoint.delete(input.id);
      this.active++;
      if (!this.stopped && this.active > 1) this.violations.push(`${input.id} resumed while another task was active`);
    }
  }

  /** Waits for the driver to open a gate; 'aborted' when the LLM signal fires; throws on cancellation. */
  wait(control: TaskControl, llm?: AbortSignal): Promise<'opened' | 'aborted'> {
    const gate = deferred();
    this.gates.add(gate);
    return new Promise<'opened' | 'aborted'>((resolve, reject) => {
      // Whichever comes first ends the wait; the gate leaves the driver's set so it is not opened late.
      const finish = (outcome: 'opened' | 'aborted' | 'cancelled') => {
        this.gates.delete(gate);
        if (outcome === 'cancelled') reject(control.signal.reason);
        else resolve(outcome);
      };
      if (control.signal.aborted) return finish('cancelled');
      if (llm?.aborted) return finish('aborted');
      control.signal.addEventListener('abort', () => finish('cancelled'), { once: true });
      llm?.addEventListener('abort', () => finish('aborted'), { once: true });
      void gate.promise.then(() => finish('opened'));
    });
  }

  openRandomGate(): boolean {
    if (this.gates.size === 0) return false;
    this.pick([...this.gates]).resolve();
    return true;
  }
}

const SEEDS = 60;
const OPERATIONS = 60;

for (let seed = 1; seed <= SEEDS; seed++) {
  t.test(`seed ${seed}: one receipt per input, one task at a time, ends idle`, async (t) => {
    const world = new World(seed);
    const { h } = world;
    await h.scheduler.start();
    const stopAt = world.random() < 0.2 ? Math.floor(world.random() * OPERATIONS) : -1;
    for (let op = 0; op < OPERATIONS; op++) {
      if (op === stopAt) {
        world.stopped = true;
        await h.scheduler.stop();
      }
      const roll = world.random();
      if (roll < 0.45) world.submit();
      else if (roll < 0.9) world.openRandomGate();
      else world.clock.at += 20;
      await drain();
    }
    // Let everything finish: open gates until every receipt is in (bounded, so a hang fails).
    let rounds = 0;
    const unresolved = new Set(world.pending.keys());
    for (const [id, promise] of world.pending) void promise.then(() => unresolved.delete(id));
    while (unresolved.size > 0 && rounds++ < 10_000) {
      if (!world.openRandomGate()) await drain();
      await drain();
      if (world.gates.size === 0 && unresolved.size > 0 && rounds > 50) break;
    }
    t.same([...unresolved], [], 'every submit resolved');
    for (const [id] of world.pending) t.equal(h.receipts.get(id)?.length ?? 0, 1, `${id}: exactly one receipt`);
    const stats = h.scheduler.stats();
    t.equal(stats.completed + stats.skipped + stats.failed + stats.cancelled, world.submitted, 'the counters add up to the inputs');
    t.match(stats, { queued: 0, interrupts_by_level: { 1: 0, 2: 0, 3: 0, 4: 0 }, suspended: 0, running: null }, 'idle');
    t.same(world.violations, [], 'no invariant violations');
    t.equal(world.gates.size, 0, 'no runner is still waiting');
    for (const [id, [receipt]] of h.receipts) {
      const plan = world.plans.get(id);
      if (receipt?.status === 'done') t.equal(plan?.fail, false, `${id} done only if its plan succeeds`);
      if (receipt?.status === 'failed' && plan?.fail === false) {
        t.match(receipt.error?.code, /HA_ERR_INPUT_QUEUE_FULL/, `${id} failed only by refusal`);
      }
    }
    if (stopAt < 0) t.equal(stats.cancelled, stats.dropped, 'without stop, only drops cancel');
  });
}
