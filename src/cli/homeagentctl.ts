#!/usr/bin/env node
/**
 * homeagentctl: the command line for a running HomeAgent, over its Unix socket. Readable text by
 * default, `--json` for scripts. Exit codes: 0 ok, 1 the daemon answered with an error (or health
 * failed), 64 usage, 69 the daemon is not running.
 */
import { describeError, isHomeAgentError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { VERSION } from '../shared/version.js';
import { runChat } from './chat.js';
import { type CommandLine, HELP, readCommandLine, usageErrorText } from './command-line.js';
import { AGENT_TURN_TIMEOUT_MS } from './command-module.js';
import { KB_LONG_COMMANDS, KB_LONG_TIMEOUT_MS, runKb } from './kb.js';
import { runMemory } from './memory.js';
import { runModels } from './models.js';
import { findSocket, RemoteError, RpcClient } from './rpc-client.js';

async function main(argv: string[]): Promise<number> {
  // Works on files without the daemon and has options of its own.
  if (argv[0] === 'models') return runModels(argv.slice(1));
  let line: CommandLine;
  try {
    line = readCommandLine(argv, { stdinIsTty: process.stdin.isTTY === true });
  } catch (error) {
    process.stderr.write(usageErrorText(error, argv));
    return EXIT_CODES.USAGE;
  }
  const { flags: values, plan: invocation } = line;
  if (invocation === 'help') {
    process.stdout.write(`${HELP}\n`);
    return EXIT_CODES.OK;
  }
  // A chat's agent turn with tools, or a kb import or reindex, can take minutes; other commands answer at once unless they say.
  const longKb = typeof invocation === 'object' && 'kb' in invocation && KB_LONG_COMMANDS.has(invocation.kb.command);
  const moduleTimeoutMs = typeof invocation === 'object' && 'module' in invocation ? invocation.module.defaultTimeoutMs : undefined;
  const defaultTimeoutMs = invocation === 'chat' ? AGENT_TURN_TIMEOUT_MS : longKb ? KB_LONG_TIMEOUT_MS : (moduleTimeoutMs ?? 30_000);
  // readCommandLine has checked that a given --timeout is a positive number.
  const timeoutMs = values.timeout === undefined ? defaultTimeoutMs : Number(values.timeout);
  const socket = findSocket(values.socket);

  let client: RpcClient | undefined;
  try {
    if (typeof invocation === 'object' && 'memory' in invocation) {
      // It may ask before connecting (forget --hard) and pages through exports itself.
      return await runMemory(invocation.memory, {
        connect: () => RpcClient.connect(socket, Math.min(timeoutMs, 5000)),
        json: values.json === true,
        timeoutMs,
      });
    }
    if (typeof invocation === 'object' && 'module' in invocation) {
      return await invocation.run({
        connect: () => RpcClient.connect(socket, Math.min(timeoutMs, 5000)),
        json: values.json === true,
        timeoutMs,
      });
    }
    if (typeof invocation === 'object' && 'kb' in invocation) {
      // kb add reads its text before connecting.
      return await runKb(invocation.kb, {
        connect: () => RpcClient.connect(socket, Math.min(timeoutMs, 5000)),
        json: values.json === true,
        timeoutMs,
      });
    }
    client = await RpcClient.connect(socket, Math.min(timeoutMs, 5000));
    if (invocation === 'version') {
      const daemon = (await client.call('version', {}, timeoutMs)) as { version: string; node: string; sqlite: string };
      if (values.json) print({ client: VERSION, daemon });
      else print(`homeagentctl ${VERSION}\nhomeagent ${daemon.version} (node ${daemon.node}, sqlite ${daemon.sqlite})`);
      return EXIT_CODES.OK;
    }
    if (invocation === 'chat') return await runChat(client, { message: values.message, json: values.json === true, timeoutMs });
    const result = await client.call(invocation.method, invocation.params, timeoutMs);
    print(values.json ? result : invocation.render(result));
    return invocation.exitCode?.(result) ?? EXIT_CODES.OK;
  } catch (error) {
    if (isHomeAgentError(error, 'HA_ERR_DAEMON_NOT_RUNNING')) {
      if (invocation === 'version' && !values.json) print(`homeagentctl ${VERSION} (daemon not reachable)`);
      report(values.json, { code: error.code, message: error.message });
      return EXIT_CODES.UNAVAILABLE;
    }
    const code = error instanceof RemoteError ? error.code : 'HA_ERR_INTERNAL';
    report(values.json, { code, message: describeError(error) });
    // A setting that does not exist or a value that does not fit is a configuration error, as at start.
    return CONFIG_ERRORS.has(code) ? EXIT_CODES.CONFIG : EXIT_CODES.FAILURE;
  } finally {
    client?.close();
  }
}

/** Answers that exit 78 (EX_CONFIG) like a configuration the daemon refuses at start. */
const CONFIG_ERRORS = new Set(['HA_ERR_SETTINGS_UNKNOWN_KEY', 'HA_ERR_SETTINGS_INVALID_VALUE', 'HA_ERR_SETTINGS_FILE_ONLY']);

function print(value: unknown): void {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
}

function report(json: boolean | undefined, error: { code: string; message: string }): void {
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
  process.stderr.write(`homeagentctl: ${error.message}${json ? '' : ` (${error.code})`}\n`);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`homeagentctl: ${describeError(error)}\n`);
    process.exitCode = EXIT_CODES.FAILURE;
  },
);
