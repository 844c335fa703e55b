/**
 * The embedded broker as the MQTT plugin runs it: the generated logins (broker-credentials.ts),
 * the rules built from this node's topics and client id (broker-access.ts), and the broker itself
 * (embedded-broker.ts), started and stopped together. It also answers `mqtt.credentials`, the
 * devices' login for the owner, and replaces that login on request.
 *
 * Logs say where the logins are kept, never what they are.
 */
import { readFile } from 'node:fs/promises';
import type { MqttCredentials } from '../../src/sdk/api.js';
import { type Caller, HomeAgentError, type Logger, type PluginContext } from '../../src/sdk/index.js';
import { BrokerAccess, type BrokerLogin, ownTopics } from './broker-access.js';
import { BrokerCredentialStore, type BrokerCredentials } from './broker-credentials.js';
import { EmbeddedBroker, type EmbeddedBrokerStatus } from './embedded-broker.js';
import type { MqttSettings } from './settings-schema.js';
import type { MqttCounters } from './types.js';

export type { MqttCredentials };

/** plugin.mqtt.* as the embedded broker reads it. */
export type EmbeddedBrokerSettings = Pick<
  MqttSettings,
  | 'broker_host'
  | 'broker_port'
  | 'broker_tls_cert_file'
  | 'broker_tls_key_file'
  | 'broker_tls_port'
  | 'broker_allow_anonymous'
  | 'broker_username'
  | 'broker_password'
  | 'broker_login_timeout_ms'
  | 'broker_max_connections'
  | 'broker_max_queued_messages'
  | 'broker_max_stored_mb'
  | 'broker_max_payload_bytes'
  | 'discovery_prefix'
>;

export interface EmbeddedBrokerServiceOptions {
  settings: EmbeddedBrokerSettings;
  /** HomeAgent's own client id, base topic and node id (resolved): the topics only it publishes on. */
  ownClientId: string;
  baseTopic: string;
  nodeId: string;
  /** The plugin's data folder: the logins file and the broker's state (`broker/`) live there. */
  dataDir: string;
  brokerDir: string;
  log: Logger;
  audit: PluginContext['audit'];
  counters: MqttCounters;
  now?: () => number;
}

export class EmbeddedBrokerService {
  readonly #o: EmbeddedBrokerServiceOptions;
  readonly #store: BrokerCredentialStore;
  #access: BrokerAccess | undefined;
  #broker: EmbeddedBroker | undefined;

  constructor(options: EmbeddedBrokerServiceOptions) {
    this.#o = options;
    this.#store = new BrokerCredentialStore({ dir: options.dataDir, ...(options.now ? { now: options.now } : {}) });
  }

  /** Loads (or makes) the logins and starts the broker; answers where and as whom HomeAgent's own client connects. */
  async start(): Promise<{ url: string; username: string; password: string }> {
    const { settings, log } = this.#o;
    const tls = await readTls(settings);
    const { credentials, created } = await this.#store.load();
    const extra = extraLogin(settings, [credentials.homeagent.username, credentials.devices.username]);
    log.info(
      { file: this.#store.file },
      created
        ? 'embedded MQTT broker: logins made (homeagentctl mqtt credentials shows the one for devices)'
        : 'embedded MQTT broker: logins loaded (homeagentctl mqtt credentials shows the one for devices)',
    );
    const logins: BrokerLogin[] = [
      { ...credentials.homeagent, role: 'homeagent' },
      { ...credentials.devices, role: 'device' },
      ...(extra === undefined ? [] : [extra]),
    ];
    const topics = ownTopics(this.#o.baseTopic, settings.discovery_prefix, this.#o.nodeId);
    const access = new BrokerAccess({
      logins,
      allowAnonymous: settings.broker_allow_anonymous,
      ownClientId: this.#o.ownClientId,
      ...topics,
    });
    const broker = new EmbeddedBroker({
      host: settings.broker_host,
      port: settings.broker_port,
      access,
      maxConnections: settings.broker_max_connections,
      maxPayloadBytes: settings.broker_max_payload_bytes,
      loginTimeoutMs: settings.broker_login_timeout_ms,
      ...(tls === undefined ? {} : { tls }),
      limits: { maxQueuedPerClient: settings.broker_max_queued_messages, maxStoredBytes: settings.broker_max_stored_mb * 1024 * 1024 },
      dataDir: this.#o.brokerDir,
      log,
      counters: this.#o.counters,
    });
    const { url } = await broker.start();
    this.#access = access;
    this.#broker = broker;
    return { url, username: credentials.homeagent.username, password: credentials.homeagent.password };
  }

  async stop(): Promise<void> {
    const broker = this.#broker;
    this.#broker = undefined;
    this.#access = undefined;
    await broker?.stop();
  }

  status(): (EmbeddedBrokerStatus & { credentials_file: string }) | null {
    const status = this.#broker?.status();
    return status === undefined ? null : { ...status, credentials_file: this.#store.file };
  }

  /** What health adds while the broker runs in a way the owner should know about. */
  warning(): { en: string; zh: string } | undefined {
    if (this.#broker === undefined || !this.#o.settings.broker_allow_anonymous) return undefined;
    return {
      en: 'the embedded broker lets clients in without a login (plugin.mqtt.broker_allow_anonymous)',
      zh: '内置 broker 允许客户端不登录就连入（plugin.mqtt.broker_allow_anonymous）',
    };
  }

  /** `mqtt.credentials`: the devices' login (owner callers only); `reset` replaces its password and disconnects its clients. */
  async credentials(params: { reset?: 'devices' }, caller: Caller): Promise<MqttCredentials> {
    const broker = this.#broker;
    const access = this.#access;
    if (broker === undefined || access === undefined)
      throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', 'the embedded MQTT broker is not running');
    let credentials: BrokerCredentials;
    let disconnected: number | undefined;
    if (params.reset === 'devices') {
      credentials = await this.#store.resetDevices();
      access.setPassword(credentials.devices.username, credentials.devices.password);
      disconnected = broker.disconnectUser(credentials.devices.username);
      this.#o.audit('mqtt.credentials.reset', { on_behalf_of: caller.actor, which: 'devices', disconnected });
      this.#o.log.info({ file: this.#store.file, disconnected }, 'embedded MQTT broker: new password for the devices login');
    } else {
      credentials = this.#store.current();
      this.#o.audit('mqtt.credentials.read', { on_behalf_of: caller.actor });
    }
    const { settings } = this.#o;
    return {
      host: settings.broker_host,
      port: portOf(broker.url) ?? settings.broker_port,
      tls_port: portOf(broker.status().tls_url ?? undefined) ?? null,
      username: credentials.devices.username,
      password: credentials.devices.password,
      extra_username: settings.broker_username === '' ? null : settings.broker_username,
      anonymous_allowed: settings.broker_allow_anonymous,
      file: this.#store.file,
      created_at: credentials.created_at,
      updated_at: credentials.updated_at,
      ...(disconnected === undefined ? {} : { disconnected }),
    };
  }
}

/** plugin.mqtt.broker_username / broker_password: both or neither, and not a generated login's name. */
function extraLogin(settings: EmbeddedBrokerSettings, generated: readonly string[]): BrokerLogin | undefined {
  const { broker_username: username, broker_password: password } = settings;
  if (username === '' && password === '') return undefined;
  if (username === '' || password === '') {
    throw new HomeAgentError(
      'HA_ERR_MQTT_BROKER',
      `the extra login of the embedded MQTT broker needs both plugin.mqtt.broker_username and broker_password (only the ${username === '' ? 'password' : 'user name'} is set)`,
    );
  }
  if (generated.includes(username)) {
    throw new HomeAgentError(
      'HA_ERR_MQTT_BROKER',
      `plugin.mqtt.broker_username ${JSON.stringify(username)} is a login the embedded broker makes itself; choose another name (or leave it empty and use the devices login)`,
    );
  }
  return { username, password, role: 'device' };
}

/** plugin.mqtt.broker_tls_cert_file / broker_tls_key_file read at start (a missing file is said at once), or undefined for no TLS. */
async function readTls(settings: EmbeddedBrokerSettings): Promise<{ cert: Buffer; key: Buffer; port: number } | undefined> {
  const { broker_tls_cert_file: certFile, broker_tls_key_file: keyFile } = settings;
  if (certFile === '' && keyFile === '') return undefined;
  if (certFile === '' || keyFile === '') {
    throw new HomeAgentError(
      'HA_ERR_MQTT_BROKER',
      'plugin.mqtt.broker_tls_cert_file and broker_tls_key_file go together: a TLS certificate needs its key',
    );
  }
  const read = async (key: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new HomeAgentError('HA_ERR_MQTT_BROKER', `plugin.mqtt.${key} ${file} cannot be read: ${(error as Error).message}`, {
        cause: error,
      });
    }
  };
  return {
    cert: await read('broker_tls_cert_file', certFile),
    key: await read('broker_tls_key_file', keyFile),
    port: settings.broker_tls_port,
  };
}

function portOf(url: string | undefined): number | undefined {
  if (url === undefined) return undefined;
  const port = Number(new URL(url).port);
  return Number.isInteger(port) && port > 0 ? port : undefined;
}
