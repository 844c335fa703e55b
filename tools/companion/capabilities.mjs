/**
 * What the companion offers its gateway, each capability one handler taking the request's args and
 * answering the result's data (or throwing a DeviceRefusal). Only what the person running it set
 * up is offered: a command allowlist (matched on the program's name only, never a path, run
 * without a shell), a clipboard (a file, or read/write commands), a screenshot (a PNG file, or a
 * command printing one), a sound (written to a file and/or played by a command such as aplay), and
 * notifications (printed, or a command such as notify-send). The gateway is trusted only as far
 * as this allowlist lets it: it cannot name a path, a shell or a program not listed.
 */
import { execFile, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Read-only look-around programs offered when --allow is not given. */
export const DEFAULT_ALLOW = ['uptime', 'date', 'hostname', 'uname', 'whoami', 'df', 'free', 'ps', 'ls', 'ip', 'lsblk', 'nproc'];

export class DeviceRefusal extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** A command line setting as program + arguments (split on spaces; no shell, no quoting). */
export function splitCommand(text) {
  const words = String(text).trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) throw new Error('an empty command');
  return { program: words[0], args: words.slice(1) };
}

function run(command, extraArgs, { input, maxBytes = 64 * 1024 * 1024, timeoutMs = 30_000, encoding = 'buffer' } = {}) {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command.program,
      [...command.args, ...extraArgs],
      { encoding, maxBuffer: maxBytes, timeout: timeoutMs, shell: false, windowsHide: true },
      (error, stdout) => (error ? reject(new DeviceRefusal('failed', `${command.program}: ${error.message}`)) : resolve(stdout)),
    );
    if (input !== undefined) child.stdin.end(input);
  });
}

/** Builds the handlers from the parsed options; `say` prints a line for the person at the device. */
export function capabilityHandlers(options, say) {
  const handlers = {};
  const running = new Map();

  if (options.allow.length > 0) {
    handlers.cmdrun = (args, id) => cmdrun(options.allow, args, id, running);
  }
  if (options.clipboardFile || (options.clipboardReadCommand && options.clipboardWriteCommand)) {
    handlers.clipboard_read = async () => {
      if (options.clipboardReadCommand)
        return { text: String(await run(splitCommand(options.clipboardReadCommand), [], { encoding: 'utf8' })) };
      return {
        text: await readFile(options.clipboardFile, 'utf8').catch((error) => (error.code === 'ENOENT' ? '' : Promise.reject(error))),
      };
    };
    handlers.clipboard_write = async (args) => {
      if (typeof args.text !== 'string') throw new DeviceRefusal('bad_request', 'clipboard_write needs text');
      if (options.clipboardWriteCommand) await run(splitCommand(options.clipboardWriteCommand), [], { input: args.text, encoding: 'utf8' });
      else await writeFile(options.clipboardFile, args.text);
      say('clipboard', { chars: args.text.length });
      return {};
    };
  }
  if (options.screenshotFile || options.screenshotCommand) {
    handlers.screenshot = async () => {
      const bytes = options.screenshotCommand
        ? await run(splitCommand(options.screenshotCommand), [])
        : await readFile(options.screenshotFile);
      say('screenshot', { bytes: bytes.length });
      return { mime: 'image/png', data: bytes.toString('base64') };
    };
  }
  if (options.soundFile || options.soundCommand) {
    handlers.sound = async (args) => {
      if (typeof args.data !== 'string') throw new DeviceRefusal('bad_request', 'sound needs base64 data');
      const bytes = Buffer.from(args.data, 'base64');
      const file = options.soundFile || join(tmpdir(), `homeagent-companion-${process.pid}.sound`);
      await writeFile(file, bytes);
      if (options.soundCommand) await run(splitCommand(options.soundCommand), [file], { timeoutMs: 120_000 });
      say('sound', { bytes: bytes.length, file });
      return {};
    };
  }
  handlers.notify = async (args) => {
    const title = typeof args.title === 'string' ? args.title : 'HomeAgent';
    const text = typeof args.text === 'string' ? args.text : '';
    if (options.notifyCommand) await run(splitCommand(options.notifyCommand), [title, text]);
    say('notification', { title, text });
    return {};
  };
  return {
    handlers,
    cancel: (id) => running.get(id)?.kill('SIGTERM'),
    stopAll: () => {
      for (const child of running.values()) child.kill('SIGKILL');
    },
  };
}

/** Runs an allowlisted program by name (PATH lookup, no shell), with the gateway's timeout and output cap. */
function cmdrun(allow, args, id, running) {
  const command = args.command;
  const argv = Array.isArray(args.args) ? args.args : [];
  if (typeof command !== 'string' || command === '' || /[/\\]/.test(command) || !allow.includes(command)) {
    throw new DeviceRefusal('not_allowed', `${String(command).slice(0, 64)} is not on this device's allowlist (${allow.join(', ')})`);
  }
  if (!argv.every((a) => typeof a === 'string')) throw new DeviceRefusal('bad_request', 'args must be strings');
  const maxBytes = Number.isSafeInteger(args.max_output_bytes) ? args.max_output_bytes : 64 * 1024;
  const timeoutMs = Number.isSafeInteger(args.timeout_ms) ? args.timeout_ms : 120_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { shell: false, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.set(id, child);
    const out = { stdout: [], stderr: [], bytes: { stdout: 0, stderr: 0 }, truncated: false };
    for (const stream of ['stdout', 'stderr']) {
      child[stream].on('data', (chunk) => {
        const room = maxBytes - out.bytes[stream];
        if (room <= 0) {
          out.truncated = true;
          return;
        }
        if (chunk.length > room) out.truncated = true;
        out[stream].push(chunk.subarray(0, room));
        out.bytes[stream] += Math.min(chunk.length, room);
      });
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      running.delete(id);
      reject(new DeviceRefusal('failed', `${command} could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(id);
      resolve({
        exit_code: code,
        signal,
        stdout: Buffer.concat(out.stdout).toString('utf8'),
        stderr: Buffer.concat(out.stderr).toString('utf8'),
        truncated: out.truncated,
      });
    });
  });
}
