/**
 * The memory graph view against the built daemon: the model (the scripted LLM server) stores a few
 * facts with memory_commit, each with the sentence it came from; then GET /api/v1/memory/graph and
 * /memory/graph/types answer the owner (the API key; the same object as memory.graph over the CLI
 * socket) and refuse everyone else (no key, a wrong key) with HA_ERR_HTTP_AUTH, a missing centre
 * with HA_ERR_MEMORY_NOT_FOUND (404) and a malformed query with HA_ERR_RPC_INVALID_PARAMS (400).
 * In Debian's chromium the Graph view searches an entity, draws its neighbours, narrows them by
 * relation and by hops, opens a node's facts with the sentences they were read from and the
 * original input, and re-centres on it. A failed browser step keeps a screenshot under
 * .tap/fixtures/ and names it in the failure.
 *
 * Time here is real (a daemon and a browser): every wait is for a condition, with a deadline.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { GraphNeighbourhoodResult, GraphTypesResult } from '../../src/api/memory-graph.js';
import {
  chromiumMissing,
  launchChromium,
  login,
  PHONE,
  startWebuiHome,
  step,
  streamedAnswer,
  toolCall,
  type WebuiHome,
} from '../helpers/browser.js';
import { REPO_ROOT } from '../helpers/daemon.js';

const WAIT_MS = 20_000;
const PAGE_INDEX = join(REPO_ROOT, 'dist', 'plugins', 'webui', 'page', 'index.html');
const built = existsSync(join(REPO_ROOT, 'dist', 'src', 'daemon.js')) ? undefined : 'dist/ is missing: run `npm run build` first';
const browserSkip = chromiumMissing() ?? (existsSync(PAGE_INDEX) ? undefined : `${PAGE_INDEX} is missing: run \`npm run build\` first`);

const SAID_HOME = 'Alice lives in Paris and works at Acme; Bob is her brother.';
const SAID_ACME = 'Acme has its office in Lyon.';

/** The model stores two sentences' facts in one turn. */
async function seedFacts(home: WebuiHome): Promise<void> {
  home.llm.enqueue(
    toolCall(
      'memory_commit',
      {
        triples: [
          { subject: 'Alice', relation: 'lives_in', object: 'Paris' },
          { subject: 'Alice', relation: 'works_at', object: 'Acme' },
          { subject: 'Bob', relation: 'sibling_of', object: 'Alice' },
        ],
        sentence_text: SAID_HOME,
      },
      'call_mem_1',
    ),
    toolCall(
      'memory_commit',
      { triples: [{ subject: 'Acme', relation: 'located_in', object: 'Lyon' }], sentence_text: SAID_ACME },
      'call_mem_2',
    ),
    streamedAnswer(['Noted.']),
  );
  await home.call('agent.chat', { text: `${SAID_HOME} ${SAID_ACME}` });
}

const names = (g: GraphNeighbourhoodResult) => g.nodes.map((n) => n.name);

/** A raw request to /api/v1 with the headers given (none: no credentials). */
async function raw(home: WebuiHome, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(`api/v1${path}`, home.url), { headers });
  return { status: response.status, body: (await response.json()) as { ok: boolean; error?: { code: string; message: string } } };
}

t.test('the memory graph view', { skip: built ?? false }, async (t) => {
  const home = await startWebuiHome(t);
  await seedFacts(home);

  await t.test('the routes: the owner gets a bounded neighbourhood, nobody else gets anything', async (t) => {
    const one = await home.api<GraphNeighbourhoodResult>('GET', '/memory/graph?entity=alice&depth=1');
    t.equal(one.center.name, 'Alice');
    t.same(names(one).sort(), ['Acme', 'Alice', 'Bob', 'Paris'], 'one hop from Alice');
    t.match(
      one.edges.find((e) => e.type === 'lives_in'),
      { sentence: SAID_HOME, valid_to: null },
      'each relation with its sentence',
    );
    t.match(
      one.nodes.find((n) => n.name === 'Acme'),
      { hidden_relations: 1 },
      'Acme says one relation is beyond',
    );
    const two = await home.api<GraphNeighbourhoodResult>('GET', '/memory/graph?entity=Alice&depth=2&max_nodes=10');
    t.ok(names(two).includes('Lyon'), 'two hops reach Lyon');
    t.same(
      two,
      await home.call('memory.graph', { entity: 'Alice', depth: 2, max_nodes: 10 }),
      'the same object as memory.graph over the CLI socket',
    );
    const lives = await home.api<GraphNeighbourhoodResult>('GET', '/memory/graph?entity=Alice&relation_types=lives_in,located_in');
    t.same(names(lives).sort(), ['Alice', 'Paris'], 'a relation filter (a comma list)');
    const types = await home.api<GraphTypesResult>('GET', '/memory/graph/types');
    t.ok(
      ['lives_in', 'works_at', 'sibling_of', 'located_in'].every((r) => types.relation_types.some((x) => x.type === r)),
      'the relation types for the filters',
    );

    for (const [what, headers] of [
      ['no credentials', {}],
      ['a wrong API key', { 'X-API-Key': 'not-the-key' }],
    ] as const) {
      for (const path of ['/memory/graph?entity=Alice', '/memory/graph/types']) {
        const refused = await raw(home, path, headers);
        t.equal(refused.status, 401, `${what}: ${path} is refused`);
        t.equal(refused.body.error?.code, 'HA_ERR_HTTP_AUTH');
      }
    }
    const key = { 'X-API-Key': home.apiKey };
    const missing = await raw(home, '/memory/graph?entity=Nobody', key);
    t.equal(missing.status, 404);
    t.equal(missing.body.error?.code, 'HA_ERR_MEMORY_NOT_FOUND');
    t.match(missing.body.error?.message, /no entity named "Nobody"/);
    const byId = await raw(home, '/memory/graph?id=987654', key);
    t.equal(byId.status, 404, 'an unknown id too');
    for (const bad of [
      '/memory/graph?entity=Alice&depth=two',
      '/memory/graph?entity=Alice&depth=9',
      '/memory/graph?entity=Alice&since=soon',
      '/memory/graph',
      '/memory/graph?entity=Alice&colour=red',
    ]) {
      const refused = await raw(home, bad, key);
      t.equal(refused.status, 400, `${bad} is a 400`);
      t.equal(refused.body.error?.code, 'HA_ERR_RPC_INVALID_PARAMS');
    }
  });

  await t.test(
    'in a browser: search, the neighbours, a filter, a node’s facts and where they came from',
    { skip: browserSkip ?? false },
    async (t) => {
      const browser = await launchChromium(t);
      const context = await browser.newContext({ viewport: PHONE, locale: 'en-US' });
      const page = await context.newPage();
      page.setDefaultTimeout(WAIT_MS);
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await login(page, home);

      await step(t, page, 'graph-search', async () => {
        await page.getByRole('link', { name: 'Graph' }).click();
        await page.locator('[data-testid=graph-hint]').waitFor();
        await page.getByLabel('Find an entity').fill('ali');
        await page.locator('[data-testid=graph-matches]').getByRole('button', { name: 'Alice', exact: true }).click();
        const svg = page.locator('[data-testid=graph-svg]');
        for (const name of ['Alice', 'Paris', 'Acme', 'Bob', 'Lyon']) await svg.locator(`g.node[data-entity="${name}"]`).waitFor();
        t.pass('Alice and her neighbours, two hops by default, are drawn');
        t.equal(await svg.locator('g.node.centre').getAttribute('data-entity'), 'Alice', 'Alice is the centre');
        t.match(page.url(), /#\/graph\/Alice$/, 'the centre is in the address');
      });

      await step(t, page, 'graph-filters', async () => {
        const svg = page.locator('[data-testid=graph-svg]');
        await page.getByLabel('Hops').selectOption('1');
        await svg.locator('g.node[data-entity="Lyon"]').waitFor({ state: 'detached' });
        t.equal(await svg.locator('g.node').count(), 4, 'one hop: Alice, Paris, Acme, Bob');
        await page.getByLabel('Relation').selectOption('lives_in');
        await svg.locator('g.node[data-entity="Bob"]').waitFor({ state: 'detached' });
        t.same(await svg.locator('g.node').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-entity')).sort()), [
          'Alice',
          'Paris',
        ]);
        await page.getByLabel('Relation').selectOption('*');
        await svg.locator('g.node[data-entity="Acme"]').waitFor();
      });

      await step(t, page, 'graph-node', async () => {
        const svg = page.locator('[data-testid=graph-svg]');
        await svg.locator('g.node[data-entity="Acme"]').click();
        const panel = page.locator('[data-testid=graph-node]');
        await panel.locator('h2', { hasText: 'Acme' }).waitFor();
        const fact = panel.locator('.fact', { hasText: 'located_in' });
        await fact.getByText(`“${SAID_ACME}”`).waitFor();
        t.pass("the node's fact shows the sentence it was read from");
        await fact.getByRole('button', { name: 'Original input' }).click();
        await fact.locator('[data-testid=graph-event]').getByText(`${SAID_HOME} ${SAID_ACME}`).waitFor();
        t.pass('and the original input behind it');

        await panel.getByRole('button', { name: 'Centre here' }).click();
        await svg.locator('g.node.centre[data-entity="Acme"]').waitFor();
        t.match(page.url(), /#\/graph\/Acme$/);
        await svg.locator('g.node[data-entity="Lyon"]').waitFor();
        t.pass('centred on Acme, its own neighbours are drawn');
      });
      t.same(pageErrors, [], 'no script errors on the page');
    },
  );
});
