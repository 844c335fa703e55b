/**
 * Zigbee2MQTT management over /api/v1 (the mqtt plugin's mqtt.zigbee_* control methods,
 * docs/mqtt.md "Zigbee management"), for the Zigbee panel of the page's Home view. Friendly names
 * may hold slashes ("bathroom/climate"), so names travel in the JSON body, never in the path. The
 * methods answer the owner only and audit every change; the page's session and key are the
 * owner's, and the method checks that again. Without the mqtt plugin or its Zigbee2MQTT feature
 * the status answers HA_ERR_RPC_UNKNOWN_METHOD, which the page reads as "no Zigbee here".
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, callMethod, noQuery } from './api-params.js';
import type { RouteDeps } from './types.js';

export function zigbeeRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/zigbee', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'mqtt.zigbee_status');
  });

  app.post('/zigbee/permit-join', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'mqtt.zigbee_permit_join', bodyObject(request.body, ['seconds', 'device']));
  });

  app.post('/zigbee/rename', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'mqtt.zigbee_rename', bodyObject(request.body, ['from', 'to']));
  });

  app.post('/zigbee/remove', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'mqtt.zigbee_remove', bodyObject(request.body, ['device', 'force']));
  });

  app.post('/zigbee/groups', async (request) => {
    noQuery(request.query);
    return callMethod(
      deps,
      request,
      'mqtt.zigbee_group',
      bodyObject(request.body, ['action', 'group', 'device', 'id', 'endpoint', 'force']),
    );
  });
}
