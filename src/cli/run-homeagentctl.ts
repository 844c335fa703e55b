/**
 * homeagentctl's run: one command line read (src/cli/command-line.ts) and carried out against the
 * daemon's socket, with the streams, directory and environment it is handed, so that it runs the
 * same as the binary (src/cli/homeagentctl.ts) and inside a test (the doc check runs every quoted
 * line in-process). Readable text by default, `--json` for scripts. Exit codes: 0 ok, 1 the daemon
 * answered with an error (or health failed), 64 usage, 69 the daemon is not running, 78 a setting
 * that does not exist or a value that does not fit.
 */
import { createInterface } from 'node:readline';
import { describeError, isHomeAgentError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { VERSION } from '../shared/version.js';
import { type ChatIo, runChat } from './chat.js';
import { cliLanguage } from './cli-language.js';
import { type CommandLine, helpText, readCommandLine, usageErrorText } from './command-line.js';
import { AGENT_TURN_TIMEOUT_MS } from './command-module.js';
import { KB_LONG_COMMANDS, KB_LONG_TIMEOUT_MS, readStream, runKb } from './kb.js';
import { type MemoryIo, runMemory } from './memory.js';
import { runModels } from './models.js';
import { findSocket, RemoteError, RpcClient } from './rpc-client.js';

/** What a run reads from and writes to. */
export interface CtlIo extends ChatIo {
  /** Relative paths (backup FILE, --out, --file, plugins install) resolve here. */
  cwd: string;
  /** HOMEAGENT_SOCKET, HOMEAGENT_RUNTIME_DIR, HOMEAGENT_DATA_DIR find the socket (and the models directory). */
  env: NodeJS.ProcessEnv;
}

/** Runs one homeagentctl command line; resolves with its exit code. */
export async function runHomeagentctl(argv: readonly string[], io: CtlIo = processIo()): Promise<number> {
  const print = (value: unknown) => {
    io.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
  };
  const report = (json: boolean | undefined, error: { code: string; message: string }) => {
    if (json) io.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
    io.stderr.write(`homeagentctl: ${error.message}${json ? '' : ` (${error.code})`}\n`);
  };
  // Works on files without the daemon and has options of its own.
  if (argv[0] === 'models') return runModels(argv.slice(1), { stdout: io.stdout, stderr: io.stderr, env: io.env, cwd: io.cwd });
  // The terminal's language, read from the run's environment: the help, the usage errors and the
  // readable answers follow it, --json does not.
  const language = cliLanguage(io.env);
  let line: CommandLine;
  try {
    line = readCommandLine(argv, { stdinIsTty: io.stdin.isTTY === true, cwd: io.cwd });
  } catch (error) {
    io.stderr.write(usageErrorText(error, argv, language));
    return EXIT_CODES.USAGE;
  }
  const { flags: values, plan: invocation } = line;
  if (invocation === 'help') {
    io.stdout.write(`${helpText(language)}\n`);
    return EXIT_CODES.OK;
  }
  // A chat's agent turn with tools, or a kb import or reindex, can take minutes; other commands answer at once unless they say.
  const longKb = typeof invocation === 'object' && 'kb' in invocation && KB_LONG_COMMANDS.has(invocation.kb.command);
  const moduleTimeoutMs = typeof invocation === 'object' && 'module' in invocation ? invocation.module.defaultTimeoutMs : undefined;
  const defaultTimeoutMs = invocation === 'chat' ? AGENT_TURN_TIMEOUT_MS : longKb ? KB_LONG_TIMEOUT_MS : (moduleTimeoutMs ?? 30_000);
  // readCommandLine has checked that a given --timeout is a positive number.
  const timeoutMs = values.timeout === undefined ? defaultTimeoutMs : Number(values.timeout);
  const socket = findSocket(values.socket, io.env, io.cwd);
  const connect = () => RpcClient.connect(socket, Math.min(timeoutMs, 5000));

  let client: RpcClient | undefined;
  try {
    if (typeof invocation === 'object' && 'memory' in invocation) {
      // It may ask before connecting (forget --hard) and pages through exports itself.
      return await runMemory(invocation.memory, { connect, json: values.json === true, timeoutMs, language, io: memoryIo(io) });
    }
    if (typeof invocation === 'object' && 'module' in invocation) {
      return await invocation.run({ connect, json: values.json === true, timeoutMs, language, stdout: io.stdout });
    }
    if (typeof invocation === 'object' && 'kb' in invocation) {
      // kb add reads its text before connecting.
      return await runKb(invocation.kb, {
        connect,
        json: values.json === true,
        timeoutMs,
        language,
        io: { stdout: io.stdout, stderr: io.stderr, readStdin: () => readStream(io.stdin) },
      });
    }
    client = await connect();
    if (invocation === 'version') {
      const daemon = (await client.call('version', {}, timeoutMs)) as { version: string; node: string; sqlite: string };
      if (values.json) print({ client: VERSION, daemon });
      else print(`homeagentctl ${VERSION}\nhomeagent ${daemon.version} (node ${daemon.node}, sqlite ${daemon.sqlite})`);
      return EXIT_CODES.OK;
    }
    if (invocation === 'chat')
      return await runChat(client, { message: values.message, json: values.json === true, timeoutMs, language }, io);
    const result = await client.call(invocation.method, invocation.params, timeoutMs);
    print(values.json ? result : invocation.render(result, language));
    return invocation.exitCode?.(result) ?? EXIT_CODES.OK;
  } catch (error) {
    if (isHomeAgentError(error, 'HA_ERR_DAEMON_NOT_RUNNING')) {
      if (invocation === 'version' && !values.json)
        print(`homeagentctl ${VERSION} ${language === 'zh' ? '（连不上守护进程）' : '(daemon not reachable)'}`);
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

/** The process's streams, directory and environment: what the homeagentctl binary runs with. */
function processIo(): CtlIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, cwd: process.cwd(), env: process.env };
}

/** memory forget --hard asks on a terminal; the question goes to stderr so that stdout stays clean for --json. */
function memoryIo(io: CtlIo): MemoryIo {
  return {
    stdout: io.stdout,
    stderr: io.stderr,
    interactive: io.stdin.isTTY === true,
    ask: (question) =>
      new Promise((resolveAnswer) => {
        const lines = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream });
        lines.question(question, (answer) => {
          lines.close();
          resolveAnswer(answer);
        });
      }),
  };
}
