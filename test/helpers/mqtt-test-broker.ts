/**
 * MQTT for tests: an in-process aedes broker on a free loopback port, and a {@link MqttLink} over a
 * plain mqtt.js client so that a feature of plugins/mqtt can be tested against a real broker
 * without the plugin's own connection. (The connection itself is tested against mosquitto too.)
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { Aedes } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
import { topicMatches } from '../../plugins/mqtt/topics.js';
import type { MessageHandler, MqttLink, MqttMessage, Qos } from '../../plugins/mqtt/types.js';

export interface TestBroker {
  url: string;
  port: number;
  broker: Aedes;
  close(): Promise<void>;
}

export async function startTestBroker(): Promise<TestBroker> {
  const broker = await Aedes.createBroker();
  const server: Server = createServer(broker.handle);
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `mqtt://127.0.0.1:${address.port}`,
    port: address.port,
    broker,
    close: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A plain client as a MqttLink (no outbox, no backoff): enough to drive a feature in a test. */
export async function connectTestLink(
  url: string,
  clientId = `test-${Math.random().toString(16).slice(2)}`,
): Promise<MqttLink & { client: MqttClient; end(): Promise<void> }> {
  const client = await mqtt.connectAsync(url, { clientId, reconnectPeriod: 0 });
  const handlers = new Map<string, Set<MessageHandler>>();
  const connectListeners = new Set<(info: { session_present: boolean }) => void>();
  client.on('message', (topic, payload, packet) => {
    const message: MqttMessage = { topic, payload, qos: packet.qos as Qos, retain: packet.retain };
    for (const [filter, set] of handlers) if (topicMatches(filter, topic)) for (const h of set) h(message);
  });
  return {
    client,
    get connected() {
      return client.connected;
    },
    publish: async (topic, payload, options = {}) => {
      await client.publishAsync(topic, payload, { qos: options.qos ?? 1, retain: options.retain ?? false });
    },
    subscribe: (filter, qos, handler) => {
      let set = handlers.get(filter);
      if (!set) {
        set = new Set();
        handlers.set(filter, set);
        client.subscribe(filter, { qos });
      }
      set.add(handler);
      return () => {
        set.delete(handler);
        if (set.size === 0) {
          handlers.delete(filter);
          client.unsubscribe(filter);
        }
      };
    },
    onConnect: (listener) => {
      connectListeners.add(listener);
      return () => void connectListeners.delete(listener);
    },
    end: () => client.endAsync(),
  };
}
