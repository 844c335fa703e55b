import { createHash } from 'node:crypto';
import { existsSync, utimesSync } from 'node:fs';
import t from 'tap';
import { MediaUpkeep } from '../../../src/knowledge/media-upkeep.js';
import { MediaStore, SWEEP_GRACE_MS } from '../../../src/store/media-store.js';
import { captureLogs, type Teardown, tempDir } from '../fixtures/support.js';
import { openKnowledge } from './fixtures/knowledge-fixture.js';
import { SAMPLES } from './fixtures/media-samples.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-30T12:00:00Z');
const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** A JPEG-looking file of `bytes` bytes, different per seed (the store sniffs only the start). */
function jpeg(seed: number, bytes = 1000): Buffer {
  const data = Buffer.alloc(bytes, seed);
  data.set([0xff, 0xd8, 0xff], 0);
  return data;
}

function storeWith(t: Teardown, files: Array<{ data: Buffer; ageMs: number }>) {
  const store = new MediaStore({ dir: tempDir(t), maxBytes: () => 1 << 20 });
  const digests = files.map(({ data, ageMs }) => {
    const { digest } = store.put(data);
    const at = new Date(NOW - ageMs);
    utimesSync(store.path(digest), at, at);
    return digest;
  });
  return { store, digests };
}

t.test('sweep: old files nothing refers to go; referenced and recent ones stay', async (t) => {
  const { store, digests } = storeWith(t, [
    { data: jpeg(1), ageMs: 40 * DAY },
    { data: jpeg(2), ageMs: 40 * DAY },
    { data: jpeg(3), ageMs: 2 * DAY },
  ]);
  const [oldLoose, oldKept, young] = digests as [string, string, string];
  const result = store.sweep({ keep: new Set([oldKept]), removeBefore: NOW - 30 * DAY, maxTotalBytes: 1 << 30 }, NOW);
  t.same(result, { removed: 1, freed_bytes: 1000, files: 2, bytes: 2000, kept_files: 1, kept_bytes: 1000 });
  t.notOk(store.has(oldLoose), 'the old snapshot is gone');
  t.ok(store.has(oldKept), 'what an entry refers to stays, however old');
  t.ok(store.has(young), 'a recent snapshot stays');
  t.same(store.stats(), { files: 2, bytes: 2000 }, 'the counts follow');
});

t.test('sweep over the size cap: the oldest unreferenced files go first, never referenced or just-stored ones', async (t) => {
  const { store, digests } = storeWith(t, [
    { data: jpeg(1), ageMs: 5 * DAY },
    { data: jpeg(2), ageMs: 4 * DAY },
    { data: jpeg(3), ageMs: 10 * DAY }, // referenced, the oldest
    { data: jpeg(4), ageMs: 3 * DAY },
    { data: jpeg(5), ageMs: SWEEP_GRACE_MS / 2 },
  ]);
  const [d1, d2, kept, d4, fresh] = digests as [string, string, string, string, string];
  const result = store.sweep({ keep: new Set([kept]), removeBefore: NOW - 30 * DAY, maxTotalBytes: 3000 }, NOW);
  t.equal(result.removed, 2, 'two removed to get down to 3,000 bytes');
  t.same(
    [d1, d2, kept, d4, fresh].map((d) => store.has(d)),
    [false, false, true, true, true],
  );

  const tight = store.sweep({ keep: new Set([kept]), removeBefore: NOW - 30 * DAY, maxTotalBytes: 0 }, NOW);
  t.equal(tight.removed, 1, 'with no room at all only the unreferenced file past the grace time goes');
  t.same(
    [kept, d4, fresh].map((d) => store.has(d)),
    [true, false, true],
  );
});

t.test('storing the same bytes again renews their time', async (t) => {
  const { store, digests } = storeWith(t, [{ data: jpeg(7), ageMs: 40 * DAY }]);
  store.put(jpeg(7));
  const result = store.sweep({ keep: new Set(), removeBefore: Date.now() - 30 * DAY, maxTotalBytes: 1 << 30 });
  t.equal(result.removed, 0);
  t.ok(store.has(digests[0] as string), 'a picture taken again counts as new');
});

t.test('upkeep with the knowledge library: attachments stay, old snapshots go, nothing while the index is not ready', async (t) => {
  const { kb, dataDir } = await openKnowledge(t, { start: false });
  const media = new MediaStore({ dir: `${dataDir}/media`, maxBytes: () => 1 << 20 });
  const captured = captureLogs('debug');
  const upkeep = new MediaUpkeep({
    media,
    referenced: () => kb.referencedMedia(),
    settings: () => ({ media_keep_days: 30, media_max_total_mb: 2048 }),
    clock: { now: () => NOW, monotonic: () => 0 },
    log: captured.logs.child('media'),
  });
  const snapshot = media.put(jpeg(9)).digest;
  const old = new Date(NOW - 60 * DAY);
  utimesSync(media.path(snapshot), old, old);

  t.equal(upkeep.sweep(), undefined, 'the library is not running: nothing is swept');
  t.ok(media.has(snapshot));

  await kb.start(new AbortController().signal);
  await kb.whenIdle();
  await kb.create('pets/cat', 'Mimi on the sofa.', { media: [{ file_name: 'mimi.png', data: SAMPLES.png }] });
  utimesSync(media.path(sha(SAMPLES.png)), old, old);
  t.same(kb.referencedMedia(), new Set([sha(SAMPLES.png)]));

  t.match(upkeep.sweep(), { removed: 1, kept_files: 1 });
  t.notOk(existsSync(media.path(snapshot)), 'the old snapshot is gone');
  t.ok(existsSync(media.path(sha(SAMPLES.png))), 'the attachment stays');
  t.ok(
    captured.records().some((r) => r.msg === 'removed 1 media file(s) nothing refers to'),
    'the removal is logged',
  );
  t.same(kb.get('pets/cat')?.media.length, 1);
});
