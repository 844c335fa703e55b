import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ENDPOINTS } from '../../../../plugins/kbtree/index.js';
import { parseSkillText } from '../../../../src/plugin/skills/skill-parser.js';

const SKILL = join(import.meta.dirname, '..', '..', '..', '..', 'assets', 'skills', 'knowledge-base', 'SKILL.md');

/** Every `GET /path?a=&b=` the skill mentions, as path → parameter names. */
function skillEndpoints(text: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const match of text.matchAll(/`GET (\/[^`?\s]*)(?:\?([^`\s]*))?`/g)) {
    const path = match[1] as string;
    const params = found.get(path) ?? new Set<string>();
    for (const pair of (match[2] ?? '').split('&')) {
      const name = pair.split('=')[0];
      if (name) params.add(name);
    }
    found.set(path, params);
  }
  return found;
}

t.test('the skill and the server name the same endpoints with the same parameters', async (t) => {
  const text = readFileSync(SKILL, 'utf8');
  const mentioned = skillEndpoints(text);
  t.same([...mentioned.keys()].sort(), ENDPOINTS.map((e) => e.path).sort(), 'same set of endpoints');
  for (const endpoint of ENDPOINTS) {
    t.same(
      [...(mentioned.get(endpoint.path) ?? [])].sort(),
      endpoint.params.map((p) => p.name).sort(),
      `${endpoint.path}: same parameters`,
    );
  }
});

t.test('the parser sees a missing or an extra endpoint', async (t) => {
  const endpoints = skillEndpoints('Use `GET /tree?category=&depth=` then `GET /search?q=` and `GET /`.');
  t.same([...endpoints.keys()], ['/tree', '/search', '/']);
  t.same([...(endpoints.get('/tree') ?? [])], ['category', 'depth']);
  t.notSame([...endpoints.keys()].sort(), ENDPOINTS.map((e) => e.path).sort());
});

t.test('the skill is a valid SKILL.md that teaches tree first, then search within a category', async (t) => {
  const skill = parseSkillText(readFileSync(SKILL, 'utf8'), { folderName: 'knowledge-base' });
  t.equal(skill.name, 'knowledge-base');
  t.same(skill.warnings, []);
  t.same(skill.metadata, { category: 'knowledge', tags: ['knowledge', 'search', 'http', 'read-only'] }, 'front matter intact');
  t.ok(skill.sections.when_to_use, 'has a when-to-use section');
  const steps = skill.sections.steps ?? [];
  t.match(steps[0], /GET \/tree/, 'step 1 reads the tree');
  t.ok(
    steps.some((step) => /GET \/search\?q=.*category=/.test(step)),
    'a later step searches within a category',
  );
  for (const way of ['X-API-Key: <token>', 'Authorization: Bearer <token>', '?token=<token>', 'homeagentctl kb token']) {
    t.ok(skill.body.includes(way), `says how to send the token: ${way}`);
  }
});
