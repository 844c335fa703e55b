/**
 * The settings of the remotedevice plugin, `plugin.remotedevice.*`: defaults, bounds, descriptions
 * and `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<RemotedeviceSettings>`. Every limit of the
 * gateway is here: devices, connections, message size, pending requests and every timeout.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginMeta, type SettingMeta, settingMeta } from '../../src/sdk/settings.js';

const meta = (description: string, description_zh: string, extra: Partial<SettingMeta> = {}) =>
  pluginMeta('remotedevice', description, { description_zh, ...extra });

const int = (value: number, minimum: number, maximum: number, description: string, zh: string, restart = false) =>
  Type.Integer({ default: value, minimum, maximum, ...meta(description, zh, { requires_restart: restart }) });

export const settingsSchema = Type.Object(
  {
    // Opt-in: the gateway opens a port, and which machines may act for the house is the owner's decision.
    enabled: Type.Boolean({
      default: false,
      ...settingMeta({
        description:
          'Run the companion device gateway (remotedevice): a WebSocket port where PCs, phones and boards with a device token offer commands, screenshots, clipboard, sound and notifications.',
        description_zh:
          '运行伴侣设备网关（remotedevice）：一个 WebSocket 端口，持有设备令牌的电脑、手机和开发板在这里提供命令、截图、剪贴板、声音和通知。',
        requires_restart: true,
        category: 'plugin.remotedevice',
      }),
    }),
    host: Type.String({
      default: '127.0.0.1',
      maxLength: 255,
      ...meta(
        'Address the device gateway listens on. Devices on other machines need a LAN address here (0.0.0.0: every interface); every device still needs its own token.',
        '设备网关监听的地址。其他机器上的设备需要在这里填局域网地址（0.0.0.0：所有网卡）；每台设备仍然需要自己的令牌。',
        { requires_restart: true },
      ),
    }),
    port: int(
      9890,
      0,
      65535,
      'Port of the device gateway (0: any free port; `homeagentctl devices` shows it).',
      '设备网关的端口（0：任意空闲端口；`homeagentctl devices` 会显示）。',
      true,
    ),
    path: Type.String({
      default: '/device',
      maxLength: 128,
      pattern: '^/[A-Za-z0-9/_-]*$',
      ...meta('The WebSocket path devices connect to.', '设备连接的 WebSocket 路径。', { requires_restart: true }),
    }),
    max_devices: int(
      16,
      1,
      256,
      'Devices that may be registered at most (homeagentctl devices add refuses more).',
      '最多可以登记的设备数（再多时 homeagentctl devices add 会拒绝）。',
    ),
    max_connections: int(
      32,
      1,
      1024,
      'Open WebSocket connections at most, bound or still in hello/bind; more are refused before the upgrade.',
      '最多同时打开的 WebSocket 连接数（已绑定的和还在 hello/bind 的都算）；再多的在升级前就被拒绝。',
      true,
    ),
    max_message_bytes: int(
      16 * 1024 * 1024,
      64 * 1024,
      64 * 1024 * 1024,
      'Largest message a bound device may send or be sent (a screenshot, a sound); a larger one closes the connection (WebSocket code 1009).',
      '已绑定的设备一条消息最多能发或收多少字节（截图、声音）；更大的会关闭连接（WebSocket 关闭码 1009）。',
      true,
    ),
    handshake_max_bytes: int(
      16 * 1024,
      1024,
      1024 * 1024,
      'Bytes a connection may send before it has bound; more closes it (so connections without a token cannot hold much memory).',
      '连接在绑定之前最多能发送的字节数；超过就关闭（这样没有令牌的连接占不了多少内存）。',
    ),
    handshake_timeout_ms: int(
      10_000,
      100,
      120_000,
      'A connection must send hello and bind within this time.',
      '连接必须在这个时间内发完 hello 和 bind。',
    ),
    ping_interval_ms: int(60_000, 100, 3_600_000, 'How often the gateway pings a bound device.', '网关多久 ping 一次已绑定的设备。'),
    ping_timeout_ms: int(
      20_000,
      100,
      600_000,
      'A device that does not answer a ping within this time is taken offline and its connection closed.',
      '在这个时间内没有回应 ping 的设备被视为离线，连接被关闭。',
    ),
    max_pending_requests: int(
      8,
      1,
      256,
      'Requests (commands, screenshots, ...) one device may have pending at once; more are refused.',
      '一台设备同时最多有几个未完成的请求（命令、截图等）；再多的被拒绝。',
    ),
    max_bad_frames: int(
      5,
      1,
      1000,
      'Frames that are not protocol a bound device may send (each answered with a coded error) before its connection is closed.',
      '已绑定的设备最多能发几个不合协议的帧（每个都回一个带错误码的 error 帧），之后连接被关闭。',
    ),
    request_timeout_ms: int(
      15_000,
      100,
      600_000,
      'A screenshot, clipboard, sound or notification request the device does not answer within this fails.',
      '设备在这个时间内没有回应的截图、剪贴板、声音或通知请求算失败。',
    ),
    cmd_wait_ms: int(
      10_000,
      0,
      120_000,
      'device_ctl_cmdrun waits this long for the result; a longer command answers its job id, and device_ctl_cmdresult fetches the result later.',
      'device_ctl_cmdrun 最多等这么久拿结果；更长的命令返回任务号，稍后用 device_ctl_cmdresult 取结果。',
    ),
    cmd_timeout_ms: int(
      120_000,
      100,
      3_600_000,
      'A command still running after this is reported as timed out (and the device is asked to stop it).',
      '超过这个时间还在运行的命令算超时（并请设备停止它）。',
    ),
    max_output_chars: int(
      16_000,
      100,
      1_000_000,
      "Characters of a command's stdout and of its stderr the model is shown (the rest is cut, and the result says so).",
      '命令的 stdout 和 stderr 各给模型看多少个字符（其余截掉，结果里会注明）。',
    ),
    max_jobs: int(
      64,
      1,
      10_000,
      'Command jobs remembered for device_ctl_cmdresult; the oldest finished one goes first.',
      '为 device_ctl_cmdresult 记住的命令任务数；最早完成的先被丢弃。',
    ),
    max_clipboard_chars: int(
      100_000,
      100,
      10_000_000,
      'Characters of clipboard text the model is shown, or may write.',
      '给模型看的、或允许写入的剪贴板文字最多多少个字符。',
    ),
  },
  { additionalProperties: false, default: {} },
);

export type RemotedeviceSettings = Static<typeof settingsSchema>;
