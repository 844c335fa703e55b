import t from 'tap';
import { registerEntityMethods } from '../../../../src/home/entity-methods.js';
import type { AuditRecord } from '../../../../src/log/logger.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { type ApiHarness, apiHarness, Type } from './api-harness.js';

/** The real entity methods over the test context's real entity registry, with a relay that switches when called. */
async function withRelay(t: Parameters<typeof apiHarness>[0]): Promise<{ h: ApiHarness; audits: AuditRecord[] }> {
  const h = await apiHarness(t);
  const audits: AuditRecord[] = [];
  registerEntityMethods(h.tc.control, h.tc.entities, { logs: { audit: (record) => void audits.push(record) } });
  const handle = h.tc.context.entities.register({
    domain: 'switch',
    object_id: 'kitchen_light',
    name: 'Kitchen light',
    area: 'kitchen',
    initial_state: 'off',
    call: async (service) => handle.update(service === 'turn_on' ? 'on' : service === 'turn_off' ? 'off' : 'on'),
  });
  h.tc.context.entities.register({
    domain: 'sensor',
    object_id: 'hall_temperature',
    name: 'Hall temperature',
    area: 'hall',
    unit: '°C',
    initial_state: 21,
  });
  return { h, audits };
}

t.test('entities: list with filters, one entity, areas', async (t) => {
  const { h } = await withRelay(t);
  const all = await h.request({ method: 'GET', url: '/api/v1/entities' });
  t.equal(all.status, 200);
  t.same((all.json.result as Array<{ entity_id: string }>).map((e) => e.entity_id).sort(), [
    'sensor.hall_temperature',
    'switch.kitchen_light',
  ]);
  const kitchen = await h.request({ method: 'GET', url: '/api/v1/entities?domain=switch&area=kitchen' });
  t.match(kitchen.json, { ok: true, result: [{ entity_id: 'switch.kitchen_light', state: 'off' }] });
  t.equal(((await h.request({ method: 'GET', url: '/api/v1/entities?area=hall&domain=switch' })).json.result as unknown[]).length, 0);

  const one = await h.request({ method: 'GET', url: '/api/v1/entities/Kitchen%20light?history_limit=0' });
  t.match(one.json, { ok: true, result: { entity: { entity_id: 'switch.kitchen_light' }, history: [] } }, 'by name, URL-encoded');

  const areas = await h.request({ method: 'GET', url: '/api/v1/areas' });
  t.match(areas.json, { ok: true, result: [{ id: 'hall' }, { id: 'kitchen' }] });

  const domain = await h.request({ method: 'GET', url: '/api/v1/entities?domain=spaceship' });
  t.equal(domain.status, 400, 'the method schema refuses an unknown domain');
  t.match(domain.json, { error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: /entities.list: params.domain/ } });

  const missing = await h.request({ method: 'GET', url: '/api/v1/entities/switch.nowhere' });
  t.equal(missing.status, 404);
  t.match(missing.json, { ok: false, error: { code: 'HA_ERR_ENTITY_NOT_FOUND' } });
});

t.test('a service call switches the relay, as the caller, audited; bad calls change nothing', async (t) => {
  const { h, audits } = await withRelay(t);
  const on = await h.request({
    method: 'POST',
    url: '/api/v1/entities/switch.kitchen_light/services/turn_on',
    payload: { data: {} },
    headers: { 'x-test-actor': 'webui:admin' },
  });
  t.equal(on.status, 200);
  t.match(on.json, { ok: true, result: { entity_id: 'switch.kitchen_light', state: 'on' } });
  t.match(audits.at(-1), { actor: 'webui:admin', action: 'entities.call', entity_id: 'switch.kitchen_light', state: 'on' });

  const off = await h.request({ method: 'POST', url: '/api/v1/entities/switch.kitchen_light/services/turn_off' });
  t.match(off.json, { ok: true, result: { state: 'off' } }, 'no body is no data');

  for (const [label, url, payload, status, code] of [
    ['a service the domain lacks', '/api/v1/entities/switch.kitchen_light/services/set_position', {}, 400, 'HA_ERR_ENTITY_SERVICE'],
    ['a malformed service name', '/api/v1/entities/switch.kitchen_light/services/Turn%20On', {}, 400, 'HA_ERR_RPC_INVALID_PARAMS'],
    ['data that is no object', '/api/v1/entities/switch.kitchen_light/services/turn_on', { data: [1] }, 400, 'HA_ERR_RPC_INVALID_PARAMS'],
    [
      'an unknown body field',
      '/api/v1/entities/switch.kitchen_light/services/turn_on',
      { brightness: 3 },
      400,
      'HA_ERR_RPC_INVALID_PARAMS',
    ],
    ['an unknown entity', '/api/v1/entities/switch.cellar/services/turn_on', {}, 404, 'HA_ERR_ENTITY_NOT_FOUND'],
  ] as const) {
    const reply = await h.request({ method: 'POST', url, payload });
    t.equal(reply.status, status, `${label}: status`);
    t.match(reply.json, { ok: false, error: { code } }, `${label}: code`);
  }
  t.equal((await h.tc.context.entities.get('switch.kitchen_light')).state, 'off', 'the relay is still off');
});

t.test('history: from, to and limit arrive as numbers', async (t) => {
  const { h } = await withRelay(t);
  await h.request({ method: 'POST', url: '/api/v1/entities/switch.kitchen_light/services/turn_on' });
  const now = Date.now();
  const reply = await h.request({ method: 'GET', url: `/api/v1/entities/switch.kitchen_light/history?from=0&to=${now + 60_000}&limit=10` });
  t.equal(reply.status, 200);
  t.match(reply.json, { ok: true, result: { entity_id: 'switch.kitchen_light', from: 0, to: now + 60_000 } });
  t.ok((reply.json.result as { rows: unknown[] }).rows.length >= 1, 'the stored states');
  const bad = await h.request({ method: 'GET', url: '/api/v1/entities/switch.kitchen_light/history?from=yesterday' });
  t.equal(bad.status, 400);
  t.match(bad.json, { error: { message: /from must be a whole number, got "yesterday"/ } });
});

t.test('statistics: per-period rows of the stored states; from and to arrive as numbers', async (t) => {
  const { h } = await withRelay(t);
  await h.request({ method: 'POST', url: '/api/v1/entities/switch.kitchen_light/services/turn_on' });
  const now = Date.now();
  const reply = await h.request({ method: 'GET', url: `/api/v1/entities/switch.kitchen_light/statistics?from=0&to=${now + 60_000}` });
  t.equal(reply.status, 200);
  const result = reply.json.result as {
    entity_id: string;
    from: number;
    to: number;
    period_ms: number;
    rows: Array<{ state: unknown; period_ms: number }>;
  };
  t.match(result, { entity_id: 'switch.kitchen_light', from: 0, to: now + 60_000, period_ms: 3_600_000 });
  t.equal(result.rows.at(-1)?.state, 'on', 'the last period ends on');
  t.ok(
    result.rows.every((r) => r.period_ms === 3_600_000),
    'every row is one period',
  );
  const bad = await h.request({ method: 'GET', url: '/api/v1/entities/switch.kitchen_light/statistics?limit=5' });
  t.equal(bad.status, 400, 'statistics take no limit: a period per row bounds them');
});

t.test('automations: list, runs, one, run now', async (t) => {
  const h = await apiHarness(t);
  const Id = Type.String({ pattern: '^[a-z0-9_]{1,64}$' });
  h.method('automations.list', Type.Object({}), () => ({ automations: [{ id: 'night_lights', enabled: true }] }));
  h.method(
    'automations.runs',
    Type.Object({ id: Type.Optional(Id), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
    () => ({
      runs: [],
    }),
  );
  h.method('automations.get', Type.Object({ id: Id }), ({ id }) => {
    if (id !== 'night_lights') throw new HomeAgentError('HA_ERR_AUTOMATION_NOT_FOUND', `no automation ${id}`);
    return { id };
  });
  h.method('automations.run', Type.Object({ id: Id, skip_conditions: Type.Optional(Type.Boolean()) }), ({ id }) => ({
    run_id: 'r1',
    outcome: 'started',
    id,
  }));

  t.match((await h.request({ method: 'GET', url: '/api/v1/automations' })).json, {
    ok: true,
    result: { automations: [{ id: 'night_lights' }] },
  });
  await h.request({ method: 'GET', url: '/api/v1/automations/runs?id=night_lights&limit=3' });
  t.same(
    h.calls.at(-1),
    {
      method: 'automations.runs',
      params: { id: 'night_lights', limit: 3 },
      caller: { actor: 'webui:api', owner: true, proof: 'the web API key' },
    },
    'runs is not an automation id',
  );
  t.match((await h.request({ method: 'GET', url: '/api/v1/automations/night_lights' })).json, { ok: true, result: { id: 'night_lights' } });
  const missing = await h.request({ method: 'GET', url: '/api/v1/automations/morning' });
  t.equal(missing.status, 404);

  const run = await h.request({ method: 'POST', url: '/api/v1/automations/night_lights/run', payload: { skip_conditions: true } });
  t.match(run.json, { ok: true, result: { run_id: 'r1' } });
  t.same(h.calls.at(-1)?.params, { id: 'night_lights', skip_conditions: true });
  await h.request({ method: 'POST', url: '/api/v1/automations/night_lights/run' });
  t.same(h.calls.at(-1)?.params, { id: 'night_lights' }, 'no body: conditions are checked');

  const calls = h.calls.length;
  const bad = await h.request({ method: 'POST', url: '/api/v1/automations/Night-Lights/run' });
  t.equal(bad.status, 400);
  t.match(bad.json, { error: { code: 'HA_ERR_RPC_INVALID_PARAMS', message: /automation id "Night-Lights"/ } });
  t.equal(h.calls.length, calls, 'nothing ran');
});
