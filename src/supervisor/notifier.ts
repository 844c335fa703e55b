/**
 * sd_notify(3) for HomeAgent: READY, STATUS, WATCHDOG and STOPPING reach systemd through the
 * sd-notify addon (sends from the main PID, works with NotifyAccess=main) or, when the addon is
 * not built (it needs libsystemd-dev), by spawning the systemd-notify binary (which needs
 * NotifyAccess=all because a child sends). Without NOTIFY_SOCKET every call does nothing.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Logger } from '../log/logger.js';
import { findOnPath } from '../shared/find-on-path.js';

export type NotifyBackend = 'auto' | 'addon' | 'binary';

interface Transport {
  readonly name: 'addon' | 'binary';
  send(message: string): void;
}

interface SdNotifyAddon {
  sendState(state: string): void;
}

export class Notifier {
  readonly #transport: Transport | undefined;
  readonly #env: NodeJS.ProcessEnv;

  private constructor(transport: Transport | undefined, env: NodeJS.ProcessEnv) {
    this.#transport = transport;
    this.#env = env;
  }

  static create(options: { backend: NotifyBackend; env?: NodeJS.ProcessEnv; log: Logger }): Notifier {
    const env = options.env ?? process.env;
    if (!env.NOTIFY_SOCKET) return new Notifier(undefined, env);
    const transport = chooseTransport(options.backend, env, options.log);
    if (transport) options.log.info({ backend: transport.name }, 'systemd notification enabled');
    else {
      options.log.error(
        'NOTIFY_SOCKET is set but neither the sd-notify addon nor the systemd-notify binary is available; systemd will not see readiness',
      );
    }
    return new Notifier(transport, env);
  }

  get enabled(): boolean {
    return this.#transport !== undefined;
  }

  get backend(): string {
    return this.#transport?.name ?? 'none';
  }

  /**
   * The interval at which WATCHDOG=1 must be sent (half of WATCHDOG_USEC, as sd_watchdog_enabled(3)
   * recommends), or undefined when systemd runs no watchdog for this process.
   */
  watchdogIntervalMs(): number | undefined {
    const usec = Number(this.#env.WATCHDOG_USEC);
    if (!this.#transport || !Number.isFinite(usec) || usec <= 0) return undefined;
    const pid = this.#env.WATCHDOG_PID;
    if (pid && Number(pid) !== process.pid) return undefined;
    return Math.max(1, Math.floor(usec / 2000));
  }

  ready(status: string): void {
    this.#send(`READY=1\nSTATUS=${oneLine(status)}\nMAINPID=${process.pid}`);
  }

  status(status: string): void {
    this.#send(`STATUS=${oneLine(status)}`);
  }

  watchdog(): void {
    this.#send('WATCHDOG=1');
  }

  stopping(status: string): void {
    this.#send(`STOPPING=1\nSTATUS=${oneLine(status)}`);
  }

  #send(message: string): void {
    this.#transport?.send(message);
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').slice(0, 400);
}

function chooseTransport(backend: NotifyBackend, env: NodeJS.ProcessEnv, log: Logger): Transport | undefined {
  if (backend !== 'binary') {
    const addon = loadAddon(log);
    if (addon || backend === 'addon') return addon;
  }
  const binary = findOnPath('systemd-notify', env.PATH ?? '');
  return binary ? binaryTransport(binary, log) : undefined;
}

function loadAddon(log: Logger): Transport | undefined {
  try {
    const addon = createRequire(import.meta.url)('sd-notify') as SdNotifyAddon;
    return { name: 'addon', send: (message) => addon.sendState(`${message}\n`) };
  } catch (error) {
    log.debug({ err: error }, 'sd-notify addon not available');
    return undefined;
  }
}

function binaryTransport(binary: string, log: Logger): Transport {
  let warned = false;
  return {
    name: 'binary',
    send(message) {
      const child = spawn(binary, message.split('\n'), { stdio: 'ignore' });
      child.on('error', (error) => {
        if (!warned) log.error({ err: error }, 'systemd-notify failed');
        warned = true;
      });
    },
  };
}
