// `homeagentctl voice satellites`: parsed like the other voice commands, printed as a table in the
// terminal's language with each failed satellite's reason under it.
import t from 'tap';
import { formatSatellites, parseVoiceCommand, VoiceUsageError } from '../../../../src/cli/voice.js';
import type { SatelliteStatus } from '../../../../src/sdk/api.js';

const kitchen: SatelliteStatus = {
  id: 'kitchen',
  name: 'Kitchen satellite',
  area: 'kitchen',
  host: '10.0.0.7',
  port: 10700,
  state: 'connected',
  since: '2026-12-04T02:00:00.000Z',
  last_seen: '2026-12-04T02:10:00.000Z',
  failures: 0,
  turns: 3,
  last_turn: { at: '2026-12-04T02:09:00.000Z', outcome: 'command', heard: 'turn on the light' },
};
const hall: SatelliteStatus = {
  id: 'hall',
  name: 'hall',
  area: 'hall',
  host: '10.0.0.8',
  port: 10700,
  state: 'failed',
  problem: 'satellite hall (10.0.0.8:10700): connection refused',
  since: '2026-12-04T02:05:00.000Z',
  failures: 4,
  retry_at: '2026-12-04T02:05:08.000Z',
  turns: 0,
};

t.test('voice satellites takes no arguments or flags', async (t) => {
  t.same(parseVoiceCommand(['satellites'], {}), { command: 'satellites' });
  t.throws(() => parseVoiceCommand(['satellites', 'kitchen'], {}), { constructor: VoiceUsageError, message: /takes no arguments/ });
  t.throws(() => parseVoiceCommand(['satellites'], { limit: '3' }), {
    constructor: VoiceUsageError,
    message: /--limit does not belong to voice satellites/,
  });
});

t.test('a table of id, room, state, last seen and last turn; reasons below it', async (t) => {
  const lines = formatSatellites([kitchen, hall], 'en').split('\n');
  t.match(lines[0], /^ID\s+ROOM\s+STATE\s+LAST SEEN\s+LAST TURN$/);
  t.match(lines[1], /^kitchen\s+kitchen\s+connected\s+2026-12-04T02:10:00.000Z\s+2026-12-04T02:09:00.000Z command: turn on the light$/);
  t.match(lines[2], /^hall\s+hall\s+failed\s+never$/);
  t.equal(lines[3], 'hall: satellite hall (10.0.0.8:10700): connection refused (retry 2026-12-04T02:05:08.000Z)');
  t.equal(lines.length, 4);
  t.match(formatSatellites([], 'en'), /no satellites configured \(plugin\.voice\.satellites\.list\)/);
});

t.test('in Chinese', async (t) => {
  const lines = formatSatellites([kitchen, hall], 'zh').split('\n');
  t.match(lines[0], /^ID\s+房间\s+状态\s+最后联系\s+最近一轮$/);
  t.match(lines[1], /已连接.*指令: turn on the light$/);
  t.match(lines[2], /^hall\s+hall\s+连接失败\s+从未$/);
  t.match(lines[3], /（?重试 2026-12-04T02:05:08.000Z/);
  t.match(formatSatellites([], 'zh'), /没有配置语音卫星/);
});
