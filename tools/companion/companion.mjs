#!/usr/bin/env node
/**
 * The HomeAgent companion: runs on a PC, a phone (Termux) or another board and connects it to the
 * remotedevice gateway as one device (docs/remote-devices.md). It says hello with the capabilities
 * set up on its command line, binds with the device id and token the owner got from
 * `homeagentctl devices add`, answers pings, and serves requests. It reconnects with a growing
 * pause when the connection drops, and exits when the gateway refuses its token (code 3) or the
 * owner revokes the device (code 4). Node 20 or newer, no packages: the WebSocket client is
 * ws-client.mjs.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { capabilityHandlers, DEFAULT_ALLOW, DeviceRefusal } from './capabilities.mjs';
import { connectWebSocket } from './ws-client.mjs';

const VERSION = '0.1.0';
const PROTOCOL = 1;
const EXIT = { OK: 0, FAILED: 1, USAGE: 2, AUTH: 3, REVOKED: 4 };

const zh = /^zh/i.test(process.env.LC_ALL || process.env.LC_MESSAGES || process.env.LANG || '');
const WORDS = {
  en: {
    usage: `usage: companion.mjs --url ws://HOST:9890/device --id DEVICE_ID --token TOKEN [options]
  --token-file FILE             read the token from a file (or HOMEAGENT_DEVICE_TOKEN)
  --allow uptime,df,...         programs the gateway may run here (default: ${DEFAULT_ALLOW.join(',')}); --allow '' offers none
  --clipboard-file FILE         the clipboard is this file; or
  --clipboard-read-command CMD --clipboard-write-command CMD   (e.g. 'xclip -o -selection clipboard' / 'xclip -selection clipboard')
  --screenshot-file PNG         the screen is this picture; or --screenshot-command CMD printing a PNG (e.g. 'grim -')
  --sound-file FILE             sounds are written here; --sound-command CMD plays them (the file is its last argument, e.g. 'aplay -q')
  --notify-command CMD          show notifications with CMD TITLE TEXT (e.g. notify-send); they are always printed
  --once                        exit when the connection ends instead of reconnecting`,
    connecting: (url) => `connecting to ${url}`,
    bound: (id, caps) => `bound as ${id}; offering: ${caps.join(', ') || 'nothing'}`,
    closed: (code, reason, wait) =>
      `connection closed (${code}${reason ? ` ${reason}` : ''}); reconnecting in ${Math.round(wait / 1000)} s`,
    failed: (message, wait) => `cannot connect: ${message}; retrying in ${Math.round(wait / 1000)} s`,
    auth: 'the gateway refused the device id or token (HA_ERR_REMOTEDEVICE_AUTH); ask the owner for a new one: homeagentctl devices rotate ID',
    revoked: 'the owner revoked this device or replaced its token (HA_ERR_REMOTEDEVICE_REVOKED)',
    error: (code, message) => `gateway error ${code}: ${message}`,
    request: (capability, id) => `request ${capability} (${id})`,
    refused: (capability, message) => `refused ${capability}: ${message}`,
    notification: ({ title, text }) => `[notification] ${title}: ${text}`,
    clipboard: ({ chars }) => `[clipboard] set (${chars} characters)`,
    screenshot: ({ bytes }) => `[screenshot] sent (${bytes} bytes)`,
    sound: ({ bytes, file }) => `[sound] ${bytes} bytes to ${file}`,
  },
  zh: {
    usage: `用法：companion.mjs --url ws://主机:9890/device --id 设备ID --token 令牌 [选项]
  --token-file 文件             从文件读取令牌（或环境变量 HOMEAGENT_DEVICE_TOKEN）
  --allow uptime,df,...         网关可以在本机运行的程序（默认：${DEFAULT_ALLOW.join(',')}）；--allow '' 表示不提供
  --clipboard-file 文件         剪贴板就是这个文件；或者
  --clipboard-read-command 命令 --clipboard-write-command 命令   （例如 'xclip -o -selection clipboard' / 'xclip -selection clipboard'）
  --screenshot-file PNG         屏幕就是这张图片；或 --screenshot-command 命令，输出一张 PNG（例如 'grim -'）
  --sound-file 文件             声音写到这里；--sound-command 命令播放（文件作为最后一个参数，例如 'aplay -q'）
  --notify-command 命令         用 命令 标题 文字 显示通知（例如 notify-send）；通知总会打印出来
  --once                        连接断开时退出，不再重连`,
    connecting: (url) => `正在连接 ${url}`,
    bound: (id, caps) => `已绑定为 ${id}；提供：${caps.join('、') || '无'}`,
    closed: (code, reason, wait) => `连接已关闭（${code}${reason ? ` ${reason}` : ''}）；${Math.round(wait / 1000)} 秒后重连`,
    failed: (message, wait) => `无法连接：${message}；${Math.round(wait / 1000)} 秒后重试`,
    auth: '网关拒绝了设备 ID 或令牌（HA_ERR_REMOTEDEVICE_AUTH）；请主人生成新的：homeagentctl devices rotate ID',
    revoked: '主人已撤销这台设备或更换了它的令牌（HA_ERR_REMOTEDEVICE_REVOKED）',
    error: (code, message) => `网关错误 ${code}：${message}`,
    request: (capability, id) => `请求 ${capability}（${id}）`,
    refused: (capability, message) => `拒绝 ${capability}：${message}`,
    notification: ({ title, text }) => `[通知] ${title}：${text}`,
    clipboard: ({ chars }) => `[剪贴板] 已设置（${chars} 个字符）`,
    screenshot: ({ bytes }) => `[截图] 已发送（${bytes} 字节）`,
    sound: ({ bytes, file }) => `[声音] ${bytes} 字节写到 ${file}`,
  },
};
const w = zh ? WORDS.zh : WORDS.en;
const say = (line) => process.stdout.write(`${line}\n`);

function readOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      id: { type: 'string' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      allow: { type: 'string' },
      'clipboard-file': { type: 'string' },
      'clipboard-read-command': { type: 'string' },
      'clipboard-write-command': { type: 'string' },
      'screenshot-file': { type: 'string' },
      'screenshot-command': { type: 'string' },
      'sound-file': { type: 'string' },
      'sound-command': { type: 'string' },
      'notify-command': { type: 'string' },
      'reconnect-min-ms': { type: 'string' },
      'reconnect-max-ms': { type: 'string' },
      once: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const token =
    values.token ?? (values['token-file'] ? readFileSync(values['token-file'], 'utf8').trim() : process.env.HOMEAGENT_DEVICE_TOKEN);
  if (!values.url || !values.id || !token) return undefined;
  return {
    url: values.url,
    id: values.id,
    token,
    allow: (values.allow ?? DEFAULT_ALLOW.join(','))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    clipboardFile: values['clipboard-file'],
    clipboardReadCommand: values['clipboard-read-command'],
    clipboardWriteCommand: values['clipboard-write-command'],
    screenshotFile: values['screenshot-file'],
    screenshotCommand: values['screenshot-command'],
    soundFile: values['sound-file'],
    soundCommand: values['sound-command'],
    notifyCommand: values['notify-command'],
    reconnectMinMs: Number(values['reconnect-min-ms'] ?? 1000),
    reconnectMaxMs: Number(values['reconnect-max-ms'] ?? 30_000),
    once: values.once === true,
  };
}

/** One connection from upgrade to close; resolves with how it ended. */
async function session(options, capabilities) {
  const ws = await connectWebSocket(options.url);
  const offered = Object.keys(capabilities.handlers);
  const send = (frame) => ws.sendText(JSON.stringify(frame));
  let bound = false;
  let lastHeard = Date.now();
  let watchdog;
  return new Promise((resolve) => {
    ws.on('error', () => undefined);
    ws.on('close', (code, reason) => {
      clearInterval(watchdog);
      capabilities.stopAll();
      resolve({ code, reason, bound });
    });
    ws.on('message', (text, binary) => {
      lastHeard = Date.now();
      if (binary) return;
      let frame;
      try {
        frame = JSON.parse(text);
      } catch {
        return;
      }
      switch (frame?.type) {
        case 'welcome': {
          send({ type: 'bind', device_id: options.id, token: options.token });
          // A gateway that went silent (its machine lost power) is noticed after two ping intervals.
          const silence = 2 * (Number(frame.ping_interval_ms) || 60_000) + 10_000;
          watchdog = setInterval(() => Date.now() - lastHeard > silence && ws.terminate(), Math.min(silence, 5000));
          return;
        }
        case 'bound':
          bound = true;
          say(w.bound(frame.device_id, Array.isArray(frame.capabilities) ? frame.capabilities : []));
          return;
        case 'ping':
          send({ type: 'pong', id: frame.id });
          return;
        case 'request':
          void serve(frame, capabilities, send);
          return;
        case 'cancel':
          capabilities.cancel(frame.id);
          return;
        case 'error':
          say(w.error(frame.code, frame.message));
          return;
        default:
          return;
      }
    });
    send({
      type: 'hello',
      protocol: PROTOCOL,
      client: `homeagent-companion/${VERSION}`,
      platform: `${process.platform}-${process.arch}`,
      capabilities: offered,
    });
  });
}

async function serve(frame, capabilities, send) {
  const handler = Object.hasOwn(capabilities.handlers, frame.capability) ? capabilities.handlers[frame.capability] : undefined;
  say(w.request(frame.capability, frame.id));
  try {
    if (!handler) throw new DeviceRefusal('not_offered', `${frame.capability} is not offered here`);
    const data = await handler(frame.args ?? {}, frame.id);
    send({ type: 'result', id: frame.id, ok: true, data });
  } catch (error) {
    const code = error instanceof DeviceRefusal ? error.code : 'failed';
    say(w.refused(frame.capability, error.message));
    send({ type: 'result', id: frame.id, ok: false, error: { code, message: error.message } });
  }
}

async function main() {
  let options;
  try {
    options = readOptions(process.argv.slice(2));
  } catch (error) {
    say(error.message);
    options = undefined;
  }
  if (!options) {
    say(w.usage);
    return EXIT.USAGE;
  }
  const capabilities = capabilityHandlers(options, (kind, detail) => say(w[kind](detail)));
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.on(signal, () => {
      stopping = true;
      process.exit(EXIT.OK);
    });
  let wait = options.reconnectMinMs;
  while (!stopping) {
    say(w.connecting(options.url));
    let ended;
    try {
      ended = await session(options, capabilities);
    } catch (error) {
      if (options.once) {
        say(w.failed(error.message, 0));
        return EXIT.FAILED;
      }
      say(w.failed(error.message, wait));
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, options.reconnectMaxMs);
      continue;
    }
    if (ended.code === 4401) {
      say(w.auth);
      return EXIT.AUTH;
    }
    if (ended.code === 4403) {
      say(w.revoked);
      return EXIT.REVOKED;
    }
    if (ended.bound) wait = options.reconnectMinMs;
    if (options.once) return ended.bound ? EXIT.OK : EXIT.FAILED;
    say(w.closed(ended.code, ended.reason, wait));
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, options.reconnectMaxMs);
  }
  return EXIT.OK;
}

process.exitCode = await main();
