import t from 'tap';
import { baseToolName, MAX_TOOL_NAME, toolNameCandidates } from '../../../../plugins/mcp/tool-names.js';

const REGISTRY_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

t.test('base names', async (t) => {
  t.equal(baseToolName('home', 'get_state'), 'mcp_home_get_state');
  t.equal(baseToolName('home', 'get.state'), 'mcp_home_get_state');
  t.equal(baseToolName('home', 'files/read file'), 'mcp_home_files_read_file');
  t.equal(baseToolName('home', 'météo'), 'mcp_home_m_t_o');
  t.equal(baseToolName('home', 'keep-dash'), 'mcp_home_keep-dash');
  const long = baseToolName('home', 'x'.repeat(200));
  t.equal(long.length, MAX_TOOL_NAME);
  t.ok(long.startsWith('mcp_home_xxx'));
});

t.test('candidates stay valid registry names', async (t) => {
  const names = [...toolNameCandidates('home', 'y'.repeat(100), 12)];
  t.equal(names.length, 12);
  t.equal(new Set(names).size, 12, 'all different');
  t.ok(names.every((name) => REGISTRY_NAME.test(name)));
  t.match(names[1], /_2$/);
  t.match(names[11], /_12$/);
  t.same([...toolNameCandidates('a', 'b', 3)], ['mcp_a_b', 'mcp_a_b_2', 'mcp_a_b_3']);
});
