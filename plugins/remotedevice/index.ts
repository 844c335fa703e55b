/**
 * The remotedevice plugin (the original's companion devices): a WebSocket gateway where a PC, a
 * phone or another board running the companion (tools/companion) binds with its own token and
 * offers capabilities — run an allowlisted command, take a screenshot, read or set the clipboard,
 * play a sound, show a notification. Each registered device is the entity
 * binary_sensor.device_<id> (on while connected) and, while it is online, the output channel
 * device_<id> (text: a notification; audio: a sound from the media store); the model reaches the
 * rest through list_devices, device_ctl_status, device_ctl_cmdrun, device_ctl_cmdresult,
 * device_clipboard and screensee.
 *
 * Off by default (it opens a port). The owner registers a device with `homeagentctl devices add`,
 * which shows its token once; only its hash is stored. A device's messages are untrusted input: the
 * gateway checks every frame and every result, and what reaches the model lowers the turn's trust
 * like any tool output. The original's channel name `device/<id>` is `device_<id>` here: channel
 * names become tool names (output_send__<name>), which cannot hold a slash.
 */
import {
  CAPABILITY,
  checkListenHost,
  definePlugin,
  type EntityHandle,
  HomeAgentError,
  isHomeAgentError,
  type OutputEvent,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  STATE_OFF,
  STATE_ON,
  urlHost,
} from '../../src/sdk/index.js';
import { CommandJobs } from './command-jobs.js';
import { DeviceGateway, type GatewayLimits } from './device-gateway.js';
import { deviceMethods } from './device-methods.js';
import type { DeviceSession } from './device-session.js';
import { DeviceStore, type RegisteredDevice } from './device-store.js';
import { deviceTools } from './device-tools.js';
import { channelName, type DeviceView, deviceView, entityObjectId } from './device-view.js';
import { ALL_DEVICE_CAPABILITIES, CLOSE, capabilityMask, type DeviceCapability, isDeviceCapability } from './protocol.js';
import type { RemotedeviceSettings } from './settings-schema.js';
import { soundMime } from './sound-mime.js';

export { DEVICE_CAPABILITY, PROTOCOL_VERSION } from './protocol.js';

export interface RemotedevicePluginOptions {
  /** Replaces plugin.remotedevice.port (tests listen on port 0). */
  port?: number;
}

/** What `remotedevice.add` and `.rotate` answer: the token, this once, and where to connect. */
export interface DeviceCredentials {
  device: DeviceView;
  token: string;
  url: string;
}

export class RemotedevicePlugin implements PluginInstance {
  readonly #ctx: PluginContext<RemotedeviceSettings>;
  readonly #options: RemotedevicePluginOptions;
  readonly #unregister: Array<() => void> = [];
  readonly #sessions = new Map<string, DeviceSession>();
  readonly #entities = new Map<string, EntityHandle>();
  readonly #channels = new Map<string, () => void>();
  readonly #lastOffline = new Map<string, { code: string; message: string; at: number }>();
  readonly #jobs: CommandJobs;
  #store: DeviceStore | undefined;
  #gateway: DeviceGateway | undefined;
  #url = '';

  constructor(ctx: PluginContext<RemotedeviceSettings>, options: RemotedevicePluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = options;
    this.#jobs = new CommandJobs(() => this.#ctx.settings.get('max_jobs'));
  }

  async start(): Promise<void> {
    const settings = this.#ctx.settings.values();
    const { host, scope } = checkListenHost(settings.host, 'plugin.remotedevice.host');
    this.#store = new DeviceStore(this.#ctx.database);
    for (const device of this.#store.list()) this.#registerEntity(device);
    for (const tool of deviceTools({
      views: () => this.#views(),
      view: (id) => this.#view(id),
      session: (id, capability) => this.#session(id, capability),
      settings: () => this.#ctx.settings.values(),
      jobs: this.#jobs,
      media: this.#ctx.media,
      audit: (action, details) => this.#ctx.audit(action, details),
    }))
      this.#unregister.push(this.#ctx.tools.register(tool));
    for (const method of deviceMethods({
      list: () => ({ gateway: { url: this.#url, listening: this.#gateway?.listening ?? false }, devices: this.#views() }),
      add: (params, actor) => this.#add(params, actor),
      rotate: (id, actor) => this.#rotate(id, actor),
      revoke: (id, actor) => this.#revoke(id, actor),
    }))
      this.#unregister.push(this.#ctx.control.register(method));

    const gateway = new DeviceGateway({
      host,
      port: this.#options.port ?? settings.port,
      path: settings.path,
      limits: () => this.#limits(),
      verify: (id, token) => this.#store?.verify(id, token),
      bound: (session) => this.#bound(session),
      ended: (session) => this.#ended(session),
      log: this.#ctx.log,
    });
    try {
      await gateway.start();
    } catch (error) {
      await this.stop();
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_START',
        `the device gateway cannot listen on ${urlHost(host, settings.port)}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    this.#gateway = gateway;
    this.#url = `ws://${urlHost(host, gateway.port)}${settings.path}`;
    if (scope === 'network')
      this.#ctx.log.warn(
        { url: this.#url },
        `the device gateway listens on ${this.#url}, reachable from the network; every device still needs its own token`,
      );
    this.#ctx.log.info({ url: this.#url, devices: this.#store.count() }, `device gateway on ${this.#url}`);
  }

  async stop(): Promise<void> {
    const gateway = this.#gateway;
    this.#gateway = undefined;
    for (const session of this.#sessions.values())
      session.close(CLOSE.SHUTDOWN, { code: 'HA_ERR_REMOTEDEVICE_OFFLINE', message: 'HomeAgent is stopping' });
    await gateway?.stop();
    this.#sessions.clear();
    for (const remove of this.#channels.values()) remove();
    this.#channels.clear();
    for (const entity of this.#entities.values()) entity.remove();
    this.#entities.clear();
    for (const unregister of this.#unregister.splice(0)) unregister();
    this.#store?.close();
    this.#store = undefined;
  }

  health(): Required<PluginHealth> {
    if (!this.#gateway?.listening) return { ok: false, detail: 'the device gateway is not listening', detail_zh: '设备网关没有在监听' };
    const total = this.#store?.count() ?? 0;
    const online = [...this.#sessions.values()].filter((s) => s.open).length;
    const c = this.#gateway.counts;
    const moved = this.#store?.recovered;
    return {
      ok: true,
      detail: `device gateway on ${this.#url}: ${online} of ${total} devices online; since start ${c.auth_failures} binds refused (wrong token), ${c.bad_frames} bad frames, ${c.too_large} too large, ${c.handshake_timeouts} handshake timeouts${moved ? `; the damaged devices.db was moved to ${moved}` : ''}`,
      detail_zh: `设备网关 ${this.#url}：${total} 台设备中 ${online} 台在线；启动以来 ${c.auth_failures} 次绑定被拒（令牌错误），${c.bad_frames} 个错误帧，${c.too_large} 次消息过大，${c.handshake_timeouts} 次握手超时${moved ? `；损坏的 devices.db 已移到 ${moved}` : ''}`,
    };
  }

  /** The gateway's address (tests read the port chosen for port 0). */
  get url(): string {
    return this.#url;
  }

  #limits(): GatewayLimits {
    const s = this.#ctx.settings.values();
    return {
      max_connections: s.max_connections,
      handshake_max_bytes: s.handshake_max_bytes,
      handshake_timeout_ms: s.handshake_timeout_ms,
      max_bad_frames: s.max_bad_frames,
      ping_interval_ms: s.ping_interval_ms,
      ping_timeout_ms: s.ping_timeout_ms,
      max_pending_requests: s.max_pending_requests,
      max_message_bytes: s.max_message_bytes,
    };
  }

  #requireStore(): DeviceStore {
    if (!this.#store) throw new HomeAgentError('HA_ERR_PLUGIN_STATE', 'the remotedevice plugin is not running');
    return this.#store;
  }

  #views(): DeviceView[] {
    return this.#requireStore()
      .list()
      .map((device) => deviceView(device, this.#sessions.get(device.id), this.#lastOffline.get(device.id)));
  }

  #view(id: string): DeviceView {
    const device = this.#requireStore().get(id);
    if (!device) throw new HomeAgentError('HA_ERR_REMOTEDEVICE_UNKNOWN', `no device ${id} is registered; list_devices shows them`);
    return deviceView(device, this.#sessions.get(id), this.#lastOffline.get(id));
  }

  #session(id: string, capability: DeviceCapability): DeviceSession {
    const view = this.#view(id);
    const session = this.#sessions.get(id);
    if (!session?.open) {
      const last = view.last_offline ? ` since ${view.last_offline.at} (${view.last_offline.code})` : '';
      throw new HomeAgentError('HA_ERR_REMOTEDEVICE_OFFLINE', `${id} is not connected${last}`);
    }
    if (!session.can(capability)) {
      throw new HomeAgentError(
        'HA_ERR_REMOTEDEVICE_CAPABILITY',
        `${id} cannot ${capability} now: it offers ${view.offered?.join(', ') || 'nothing'}, the owner granted ${view.granted.join(', ') || 'nothing'}`,
      );
    }
    return session;
  }

  #add(params: { id: string; name?: string; capabilities?: string[] }, actor: string): DeviceCredentials {
    const store = this.#requireStore();
    const granted =
      params.capabilities === undefined ? ALL_DEVICE_CAPABILITIES : capabilityMask(params.capabilities.filter(isDeviceCapability));
    const { device, token } = store.add(
      { id: params.id, name: params.name?.trim() || params.id, capabilities: granted, by: actor },
      this.#ctx.settings.get('max_devices'),
    );
    this.#registerEntity(device);
    this.#ctx.audit('remotedevice.add', { device: device.id, name: device.name, capabilities: params.capabilities ?? 'all', by: actor });
    return { device: this.#view(device.id), token, url: this.#url };
  }

  #rotate(id: string, actor: string): DeviceCredentials {
    const { device, token } = this.#requireStore().rotate(id);
    this.#sessions
      .get(id)
      ?.close(CLOSE.REVOKED, { code: 'HA_ERR_REMOTEDEVICE_REVOKED', message: 'the owner replaced this device’s token' });
    this.#ctx.audit('remotedevice.rotate', { device: device.id, by: actor });
    return { device: this.#view(device.id), token, url: this.#url };
  }

  #revoke(id: string, actor: string): { revoked: string; was_online: boolean } {
    const device = this.#requireStore().remove(id);
    const session = this.#sessions.get(id);
    const wasOnline = session?.open === true;
    session?.close(CLOSE.REVOKED, { code: 'HA_ERR_REMOTEDEVICE_REVOKED', message: 'the owner revoked this device' });
    this.#dropSession(id);
    this.#entities.get(id)?.remove();
    this.#entities.delete(id);
    this.#lastOffline.delete(id);
    this.#ctx.audit('remotedevice.revoke', { device: device.id, was_online: wasOnline, by: actor });
    return { revoked: device.id, was_online: wasOnline };
  }

  #registerEntity(device: RegisteredDevice): void {
    this.#entities.get(device.id)?.remove();
    this.#entities.set(
      device.id,
      this.#ctx.entities.register({
        domain: 'binary_sensor',
        object_id: entityObjectId(device.id),
        name: device.name,
        device_class: 'connectivity',
        device: `companion:${device.id}`,
        initial_state: STATE_OFF,
        attributes: { device_id: device.id, channel: channelName(device.id), capabilities: [] },
      }),
    );
  }

  #bound(session: DeviceSession): void {
    const id = session.device.id;
    const previous = this.#sessions.get(id);
    this.#sessions.set(id, session);
    previous?.close(CLOSE.REPLACED, { code: 'HA_ERR_REMOTEDEVICE_OFFLINE', message: 'replaced by a newer connection of the same device' });
    this.#channels.get(id)?.();
    this.#channels.set(id, this.#registerChannel(session));
    const view = deviceView(session.device, session, undefined);
    this.#entities
      .get(id)
      ?.update(STATE_ON, { capabilities: view.capabilities, platform: view.platform, client: view.client, remote: view.remote });
    this.#ctx.log.info({ device: id, remote: session.info.remote, capabilities: view.capabilities }, `device ${id} online`);
    this.#ctx.audit('remotedevice.bound', { device: id, remote: session.info.remote, client: session.info.client });
  }

  #ended(session: DeviceSession): void {
    const id = session.device.id;
    if (this.#sessions.get(id) !== session) return;
    const reason = session.closeReason ?? { code: 'HA_ERR_REMOTEDEVICE_OFFLINE', message: 'the connection closed' };
    this.#lastOffline.set(id, { ...reason, at: Date.now() });
    this.#dropSession(id);
    this.#entities.get(id)?.update(STATE_OFF, { capabilities: [], last_offline_reason: reason.code });
    this.#ctx.log.info({ device: id, code: reason.code }, `device ${id} offline: ${reason.message}`);
  }

  #dropSession(id: string): void {
    this.#sessions.delete(id);
    this.#channels.get(id)?.();
    this.#channels.delete(id);
  }

  /** The output channel of an online device: text is a notification, audio a sound from the media store. */
  #registerChannel(session: DeviceSession): () => void {
    const id = session.device.id;
    const bits = (session.can('notify') ? CAPABILITY.TEXT : 0) | (session.can('sound') ? CAPABILITY.AUDIO : 0);
    return this.#ctx.io.registerOutputChannel({
      name: channelName(id),
      description: `companion device "${session.device.name}": ${[session.can('notify') && 'a notification on its screen (text)', session.can('sound') && 'a sound it plays (audio: the media id of a stored sound)'].filter(Boolean).join('; ') || 'nothing to send'}`,
      capabilities: bits,
      synchronous: false,
      listening: () => session.open,
      send: (event) => this.#send(id, event),
    });
  }

  async #send(id: string, event: OutputEvent): Promise<void> {
    const timeout = this.#ctx.settings.get('request_timeout_ms');
    if (event.type === 'text') {
      const title = typeof event.meta.title === 'string' ? event.meta.title.slice(0, 100) : 'HomeAgent';
      await this.#session(id, 'notify').request('notify', { title, text: String(event.payload) }, timeout);
      return;
    }
    if (event.type === 'audio') {
      const session = this.#session(id, 'sound');
      let bytes: Buffer;
      try {
        bytes = this.#ctx.media.read(String(event.payload).trim());
      } catch (error) {
        if (isHomeAgentError(error))
          throw new HomeAgentError(
            'HA_ERR_REMOTEDEVICE_CAPABILITY',
            `the payload must be the media id of a stored sound: ${error.message}`,
          );
        throw error;
      }
      const mime = soundMime(bytes);
      if (!mime) throw new HomeAgentError('HA_ERR_REMOTEDEVICE_CAPABILITY', 'that media id is not a sound (wav, ogg, flac or mp3)');
      await session.request('sound', { mime, data: bytes.toString('base64') }, timeout);
      this.#ctx.audit('remotedevice.sound', { device: id, bytes: bytes.length });
      return;
    }
    throw new HomeAgentError('HA_ERR_IO_CAPABILITY', `channel ${channelName(id)} carries text and audio only`);
  }
}

export function createRemotedevicePlugin(options: RemotedevicePluginOptions = {}) {
  return (ctx: PluginContext<RemotedeviceSettings>) => new RemotedevicePlugin(ctx, options);
}

export default definePlugin<RemotedeviceSettings>(createRemotedevicePlugin());
