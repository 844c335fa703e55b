/**
 * What the homeagentctl commands that talk to the daemon themselves (entities, automations, gpio,
 * i2c sensors, mqtt) share: the connection they are handed, their run options, one session that
 * always closes the connection, and the hint that turns "unknown method" into "that plugin is not
 * running" — the daemon only has a plugin's control methods while the plugin runs.
 */
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import { RemoteError } from './rpc-client.js';

/** What a command needs of a connection (RpcClient fits; tests pass fakes). */
export interface CommandClient {
  call(method: string, params: object, timeoutMs: number): Promise<unknown>;
  close(): void;
}

export interface CommandRunOptions {
  /** Called once the command is ready to talk to the daemon. */
  connect: () => Promise<CommandClient>;
  json: boolean;
  timeoutMs: number;
  /** process.stdout by default; tests collect the output. */
  stdout?: { write(text: string): unknown };
  /** Epoch ms for ages and retry times ("changed 5m ago", "retry in 40 s"); Date.now by default. */
  now?: () => number;
  /** The language of the readable output; the terminal's (cli-language.ts) by default. --json is the same in both. */
  language?: Language;
}

/** The plugin that owns a command's methods, and any set-up besides enabling it. */
export interface PluginHint {
  /** The plugin's name, as in plugin.<name>.enabled. */
  plugin: string;
  /** Another step the owner must take, e.g. "configure plugin.i2c.sensors". */
  also?: string;
}

/** Calls a daemon method with the run's timeout. */
export type DaemonCall = (method: string, params: object) => Promise<unknown>;

/**
 * `client.call` with `timeoutMs`. With a hint, an unknown method is reported as the plugin not
 * running, with how to enable it; every other error passes unchanged.
 */
export function callOrExplain(client: CommandClient, timeoutMs: number, hint?: PluginHint): DaemonCall {
  if (hint === undefined) return (method, params) => client.call(method, params, timeoutMs);
  return async (method, params) => {
    try {
      return await client.call(method, params, timeoutMs);
    } catch (error) {
      if (error instanceof RemoteError && error.code === 'HA_ERR_RPC_UNKNOWN_METHOD') {
        throw new RemoteError({ code: error.code, message: pluginNotRunning(hint) });
      }
      throw error;
    }
  };
}

/** "the gpio plugin is not running: enable it with plugin.gpio.enabled: true and restart HomeAgent". */
export function pluginNotRunning(hint: PluginHint): string {
  const also = hint.also === undefined ? '' : `, ${hint.also},`;
  return `the ${hint.plugin} plugin is not running: enable it with plugin.${hint.plugin}.enabled: true${also} and restart HomeAgent`;
}

export interface CommandSession {
  call: DaemonCall;
  /** Writes the result (pretty JSON with --json, else `format(result)`) and a newline; returns EXIT_CODES.OK. */
  print<R>(result: R, format: (result: R) => string): typeof EXIT_CODES.OK;
}

/** Connects, runs `body`, and closes the connection whatever happens. Daemon errors are thrown (homeagentctl reports them). */
export async function withDaemon<T>(
  options: CommandRunOptions,
  hint: PluginHint | undefined,
  body: (session: CommandSession) => Promise<T>,
): Promise<T> {
  const stdout = options.stdout ?? process.stdout;
  const client = await options.connect();
  try {
    return await body({
      call: callOrExplain(client, options.timeoutMs, hint),
      print: (result, format) => {
        stdout.write(`${options.json ? JSON.stringify(result, null, 2) : format(result)}\n`);
        return EXIT_CODES.OK;
      },
    });
  } finally {
    client.close();
  }
}
