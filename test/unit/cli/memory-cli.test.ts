// `homeagentctl memory …` (src/cli/memory.ts): argument parsing, the atomic export writer, and the
// commands end to end through the real cli plugin socket, RpcClient and memory control methods.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CliPlugin } from '../../../plugins/cli/index.js';
import {
  type ExportedRecord,
  exportRecords,
  exportToFile,
  formatForget,
  type MemoryClient,
  type MemoryCommand,
  type MemoryIo,
  MemoryUsageError,
  parseMemoryCommand,
  runMemory,
} from '../../../src/cli/memory.js';
import { RpcClient } from '../../../src/cli/rpc-client.js';
import type { ForgetResult } from '../../../src/memory/memory-methods.js';
import { runCtl } from '../../helpers/daemon.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { tempDir } from '../fixtures/support.js';
import { type MemoryControlSetup, startMemoryControl } from '../memory/fixtures/memory-control.js';
import { HOUR, T0 } from '../memory/fixtures/memory-fixture.js';

t.test('parseMemoryCommand reads each command and refuses what does not fit', async (t) => {
  t.same(parseMemoryCommand(['search', 'where', 'is', 'Anna'], {}), { command: 'search', query: 'where is Anna' });
  t.same(parseMemoryCommand(['search', 'boiler'], { limit: '5' }), { command: 'search', query: 'boiler', limit: 5 });
  t.same(parseMemoryCommand(['stats'], {}), { command: 'stats' });
  t.same(parseMemoryCommand(['entity', 'green', 'tea'], {}), { command: 'entity', name: 'green tea' });
  t.same(parseMemoryCommand(['forget'], { entity: 'Anna' }), { command: 'forget', target: { entity: 'Anna' }, hard: false, yes: false });
  t.same(parseMemoryCommand(['forget'], { entity: 'Anna', hard: true, yes: true }), {
    command: 'forget',
    target: { entity: 'Anna' },
    hard: true,
    yes: true,
  });
  t.same(parseMemoryCommand(['forget'], { event: 'ev-1' }), { command: 'forget', target: { event: 'ev-1' }, hard: false, yes: false });
  t.same(parseMemoryCommand(['forget'], { document: '12' }), { command: 'forget', target: { document: 12 }, hard: false, yes: false });
  t.same(parseMemoryCommand(['export'], {}), { command: 'export' });
  t.same(parseMemoryCommand(['export'], { out: 'mem.jsonl' }, '/srv/home'), { command: 'export', out: '/srv/home/mem.jsonl' });

  const refused: Array<[string[], Record<string, string | boolean>, RegExp]> = [
    [[], {}, /needs a command/],
    [['recall'], {}, /unknown memory command recall/],
    [['search'], {}, /needs the TEXT/],
    [['search', 'x'], { limit: '0' }, /--limit/],
    [['search', 'x'], { limit: '51' }, /--limit/],
    [['search', 'x'], { limit: 'ten' }, /--limit/],
    [['search', 'x'], { out: 'f' }, /--out does not belong to memory search/],
    [['stats', 'now'], {}, /takes no arguments/],
    [['stats'], { limit: '3' }, /--limit does not belong to memory stats/],
    [['entity'], {}, /needs a NAME/],
    [['forget'], {}, /exactly one of/],
    [['forget', 'Anna'], {}, /--entity NAME/],
    [['forget'], { entity: 'a', event: 'b' }, /exactly one of/],
    [['forget'], { event: 'b', hard: true }, /--hard applies to --entity only/],
    [['forget'], { document: 'x1' }, /document id/],
    [['forget'], { document: '0' }, /document id/],
    [['forget'], { entity: ' ' }, /--entity needs a NAME/],
    [['export', 'file.jsonl'], {}, /--out/],
    [['export'], { yes: true }, /--yes does not belong to memory export/],
  ];
  for (const [positionals, flags, message] of refused) {
    t.throws(
      () => parseMemoryCommand(positionals, flags),
      { constructor: MemoryUsageError, message },
      `${positionals.join(' ')} ${JSON.stringify(flags)}`,
    );
  }
});

/** A scripted `memory.export` over `records`, `size` per page. */
function pagesOf(records: ExportedRecord[], size: number, failAt?: number) {
  let calls = 0;
  return async (cursor: string | undefined) => {
    calls++;
    if (calls === failAt) throw new Error('the daemon went away');
    const from = cursor === undefined ? 0 : Number(cursor);
    const next = from + size < records.length ? String(from + size) : undefined;
    return { records: records.slice(from, from + size), ...(next !== undefined && { next }) };
  };
}

const RECORDS: ExportedRecord[] = Array.from({ length: 25 }, (_, i) => ({ type: i < 10 ? 'event' : 'entity', id: i, text: `row ${i} ✓` }));

t.test('formatForget says where a forgotten event was removed from, the raw conversation log included', async (t) => {
  const event: Extract<ForgetResult, { target: 'event' }> = {
    target: 'event',
    event: 'ev-1',
    from_window: true,
    documents_removed: [],
    raw_log_records_removed: 0,
    facts_kept: 0,
  };
  t.equal(formatForget(event), 'event ev-1: removed from the context window');
  t.equal(
    formatForget({ ...event, documents_removed: [4], raw_log_records_removed: 3, facts_kept: 2 }),
    'event ev-1: removed from the context window, archive document 4 deleted, 3 lines removed from the raw conversation log; 2 sentences read from it stay in the graph (forget the entities to remove them)',
  );
  t.equal(
    formatForget({ ...event, from_window: false, raw_log_records_removed: 1, facts_kept: 1 }),
    'event ev-1: 1 line removed from the raw conversation log; 1 sentence read from it stays in the graph (forget the entities to remove them)',
    'only the raw log had it',
  );
});

t.test('exportToFile writes JSON Lines atomically: the old file survives a failed export, no temp file stays', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'memory.jsonl');
  writeFileSync(file, 'previous export\n');

  await t.rejects(exportToFile(pagesOf(RECORDS, 4, 3), file), /the daemon went away/);
  t.equal(readFileSync(file, 'utf8'), 'previous export\n', 'the previous file is untouched');
  t.same(readdirSync(dir), ['memory.jsonl'], 'the temporary file was removed');

  const summary = await exportToFile(pagesOf(RECORDS, 4), file);
  t.match(summary, { records: 25, counts: { event: 10, entity: 15 }, file });
  const lines = readFileSync(file, 'utf8').split('\n');
  t.equal(lines.pop(), '', 'ends with a newline');
  t.same(
    lines.map((l) => JSON.parse(l)),
    RECORDS,
    'every record once, in order',
  );
  t.equal(summary.bytes, Buffer.byteLength(readFileSync(file)), 'bytes counts what was written');
  t.same(readdirSync(dir), ['memory.jsonl']);

  await t.rejects(
    exportToFile(pagesOf(RECORDS, 4), join(dir, 'missing', 'x.jsonl')),
    { code: 'ENOENT' },
    'a missing directory is an error',
  );
});

t.test('exportRecords stops when the cursor does not move on', async (t) => {
  let written = '';
  const stuck = async () => ({ records: [{ type: 'event', id: 1 }], next: 'event:1' });
  await t.rejects(
    exportRecords(stuck, async (text) => {
      written += text;
    }),
    /stopped moving at cursor event:1/,
  );
  t.equal(written.split('\n').filter(Boolean).length, 2, 'it stopped after the repeat, not never');
});

interface Served extends MemoryControlSetup {
  socket: string;
  connects: number;
  connect: () => Promise<MemoryClient>;
}

/** The memory control methods served by the real cli plugin on a Unix socket. */
async function serve(t: Parameters<typeof startMemoryControl>[0]): Promise<Served> {
  const m = await startMemoryControl(t);
  const test = createTestPluginContext({
    name: 'cli',
    dataDir: m.dir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  const plugin = new CliPlugin(
    asContext({
      ...test.context,
      control: {
        ...test.context.control,
        call: (method, params, caller) => m.control.call(method, params, caller),
        methods: () => m.control.methods(),
      },
    }),
  );
  await plugin.start();
  t.teardown(() => plugin.stop());
  const socket = join(m.dir, 'run', 'homeagent.sock');
  const served: Served = {
    ...m,
    socket,
    connects: 0,
    connect: () => {
      served.connects++;
      return RpcClient.connect(socket, 5000);
    },
  };
  return served;
}

function captureIo(options: { interactive?: boolean; answer?: string } = {}): MemoryIo & { out(): string; err(): string; asked: string[] } {
  let out = '';
  let err = '';
  const asked: string[] = [];
  return {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    interactive: options.interactive === true,
    ask: async (question) => {
      asked.push(question);
      return options.answer ?? '';
    },
    out: () => out,
    err: () => err,
    asked,
  };
}

async function seed(m: MemoryControlSetup): Promise<void> {
  const { window, documents, graph } = m.parts().stores;
  for (let i = 0; i < 30; i++) window.append({ id: `ev-${i}`, timestamp: T0 + i, source: 'cli', input: `the boiler note ${i}` });
  for (let i = 0; i < 20; i++)
    await documents.insert({ content: `garden plan, part ${String.fromCharCode(97 + i)}`, source: 'doc_commit' });
  await graph.commit([{ subject: 'Anna', relation: 'lives_in', object: 'Oslo', sentence: 'I live in Oslo.' }], {
    source_event_id: 'ev-1',
    timestamp: T0,
  });
  await graph.commit([{ subject: 'Anna', relation: 'lives_in', object: 'Shanghai', sentence: 'I moved to Shanghai.' }], {
    source_event_id: 'ev-2',
    timestamp: T0 + HOUR,
  });
}

async function run(s: Served, command: MemoryCommand, options: { json?: boolean; io?: ReturnType<typeof captureIo> } = {}) {
  const io = options.io ?? captureIo();
  const code = await runMemory(command, { connect: s.connect, json: options.json === true, timeoutMs: 10_000, io });
  return { code, out: io.out(), err: io.err(), io };
}

t.test('memory export over the socket: to a file and to stdout, every record once', async (t) => {
  const s = await serve(t);
  await seed(s);
  const file = join(s.dir, 'export.jsonl');
  const toFile = await run(s, { command: 'export', out: file });
  t.equal(toFile.code, 0, toFile.err);
  t.match(toFile.out, /^exported 57 records \(30 events, 20 documents, 3 entities, 2 sentences, 2 relations\), .* to .*export\.jsonl\n$/);
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const keys = lines.map((l) => {
    const r = JSON.parse(l) as { type: string; id: unknown };
    return `${r.type}:${r.id}`;
  });
  t.equal(keys.length, 57);
  t.equal(new Set(keys).size, 57, 'no record twice');

  const toStdout = await run(s, { command: 'export' });
  t.equal(toStdout.code, 0);
  t.equal(toStdout.out, readFileSync(file, 'utf8'), 'stdout gets the same JSON Lines');

  const json = await run(s, { command: 'export', out: file }, { json: true });
  t.match(JSON.parse(json.out), { ok: true, records: 57, file });
});

t.test('memory search, stats and entity over the socket: readable text and --json', async (t) => {
  const s = await serve(t);
  await seed(s);
  const search = await run(s, { command: 'search', query: 'boiler note 7', limit: 3 });
  t.equal(search.code, 0);
  t.match(search.out, /^1\. \[event\] \d\.\d\d {2}today \(2024-05-06\): the boiler note 7\n {3}from ev-7\n/, 'the prompt line');
  const nothing = await run(s, { command: 'search', query: 'zebra saxophone quantum' });
  t.match(nothing.out, /^no record/);
  const searchJson = await run(s, { command: 'search', query: 'boiler note 7', limit: 3 }, { json: true });
  t.match(JSON.parse(searchJson.out), { abstain: false, items: [{ kind: 'event', sources: ['ev-7'] }] });
  t.ok(JSON.parse(searchJson.out).items.length <= 3, '--limit reaches the daemon');

  const stats = await run(s, { command: 'stats' });
  t.match(stats.out, /window +30 of 30 events/);
  t.match(stats.out, /documents +20\n/);
  t.match(stats.out, /relations +1 current, 1 history/);
  t.match(stats.out, /maintenance +distill every 30 min, archive every 60 min/);
  t.match(JSON.parse((await run(s, { command: 'stats' }, { json: true })).out), { entities: { total: 3 } });

  const entity = await run(s, { command: 'entity', name: 'anna' });
  t.equal(entity.code, 0);
  t.match(entity.out, /^Anna: 2 mentions\nfacts:\n {2}Anna lives_in Shanghai {3}since 2024-05-06 09:00/);
  t.match(entity.out, /"I moved to Shanghai\." \(event ev-2\)/);
  t.match(entity.out, /history:\n {2}Anna lives_in Oslo {3}2024-05-06 08:00 \.\. 2024-05-06 09:00/);
  await t.rejects(run(s, { command: 'entity', name: 'Zorro' }), { code: 'HA_ERR_MEMORY_NOT_FOUND', message: /Zorro/ });
});

t.test('memory forget --hard asks first: refused off a terminal without --yes, before connecting', async (t) => {
  const s = await serve(t);
  await seed(s);
  const hard: MemoryCommand = { command: 'forget', target: { entity: 'Anna' }, hard: true, yes: false };

  const refused = await run(s, hard);
  t.equal(refused.code, 64);
  t.match(refused.err, /stdin is not a terminal, so add --yes/);
  t.equal(s.connects, 0, 'the daemon was not even contacted');

  const declined = await run(s, hard, { io: captureIo({ interactive: true, answer: 'n' }) });
  t.equal(declined.code, 1);
  t.match(declined.io.asked, [/Delete "Anna" with all its relations/]);
  t.match(declined.err, /nothing was forgotten/);
  t.equal(s.connects, 0);
  t.ok(s.parts().stores.graph.entity('Anna'), 'Anna is still there');

  const soft = await run(s, { command: 'forget', target: { entity: 'Anna' }, hard: false, yes: false });
  t.equal(soft.out, 'Anna: 1 current fact ended (kept as history; --hard deletes)\n');

  const agreed = await run(s, hard, { io: captureIo({ interactive: true, answer: 'yes' }) });
  t.equal(agreed.code, 0);
  t.equal(agreed.out, 'Anna deleted with 2 relations and 2 sentences\n');
  t.notOk(s.parts().stores.graph.entity('Anna'));

  const event = await run(s, { command: 'forget', target: { event: 'ev-5' }, hard: false, yes: false }, { json: true });
  t.match(JSON.parse(event.out), { target: 'event', event: 'ev-5', from_window: true });
  const doc = await run(s, { command: 'forget', target: { document: 1 }, hard: false, yes: false });
  t.equal(doc.out, 'document 1 deleted\n');
  t.match(
    s.audits().map((a) => a.actor),
    ['cli', 'cli', 'cli', 'cli'],
    'the socket forwards the cli actor to the audit log',
  );
});

t.test('homeagentctl memory: usage errors exit 64; --hard is refused without --yes before any socket is tried', async (t) => {
  const dataDir = tempDir(t);
  for (const args of [
    ['memory'],
    ['memory', 'stats', '--limit', '3'],
    ['status', '--hard'],
    ['memory', 'forget', '--event', 'x', '--hard'],
    ['memory', 'export', 'file'],
  ]) {
    const r = await runCtl(dataDir, args);
    t.equal(r.code, 64, `${args.join(' ')}: ${r.stderr.split('\n')[0]}`);
  }
  const help = await runCtl(dataDir, ['--help']);
  t.match(help.stdout, /memory forget --entity NAME \[--hard \[--yes\]\] \| --event ID \| --document ID/);
  const hard = await runCtl(dataDir, ['memory', 'forget', '--entity', 'Anna', '--hard']);
  t.equal(hard.code, 64);
  t.match(hard.stderr, /add --yes to confirm/);
  t.notOk(existsSync(join(dataDir, 'run')), 'no socket path was needed');
  if (!existsSync('/run/homeagent/homeagent.sock')) {
    const down = await runCtl(dataDir, ['memory', 'forget', '--entity', 'Anna', '--hard', '--yes']);
    t.equal(down.code, 69, 'with --yes it goes on to the daemon (not running here)');
  }
});
