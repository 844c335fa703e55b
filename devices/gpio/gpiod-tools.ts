/**
 * The libgpiod command-line tools (Debian package `gpiod`): finding them, telling v1 (bookworm,
 * 1.6) from v2 (trixie, 2.x) by `--version`, and the argument lists and output formats of each.
 *
 * | | v1 | v2 |
 * |---|---|---|
 * | chip | positional first argument | `-c <chip>` |
 * | bias | `-B as-is\|disable\|pull-up\|pull-down` | `-b disabled\|pull-up\|pull-down` (omit for as-is) |
 * | gpioget prints | `1` | `"17"=active` |
 * | gpioset holding the line | `--mode=signal` | the default (runs until killed) |
 * | gpiomon format `%e` | `1` rising, `0` falling | `1` rising, `2` falling |
 *
 * Both print `gpiochip0 [pinctrl-bcm2711] (58 lines)` from gpiodetect.
 */
import { execFile } from 'node:child_process';
import { findOnPath, HomeAgentError } from '../../src/sdk/index.js';
import type { GpioChipInfo } from './chip-offset.js';
import type { GpioBias, GpioValue } from './gpio-backend.js';

export type GpiodMajor = 1 | 2;

export interface GpiodTools {
  major: GpiodMajor;
  /** What `gpioget --version` printed first, for status lines. */
  versionText: string;
  gpioget: string;
  gpioset: string;
  gpiomon: string;
  gpiodetect: string;
  /** coreutils stdbuf, to line-buffer a v2 gpiomon writing into a pipe; undefined if absent. */
  stdbuf: string | undefined;
}

const TOOL_TIMEOUT_MS = 5_000;

/** Runs a tool to completion; rejects with its stderr on a non-zero exit. */
export function runTool(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, timeout: TOOL_TIMEOUT_MS, maxBuffer: 256 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const detail = String(stderr).trim().split('\n').slice(-3).join(' | ') || error.message;
        reject(new HomeAgentError('HA_ERR_GPIO_IO', `${file} ${args.join(' ')}: ${detail}`, { cause: error }));
      } else resolve(String(stdout));
    });
  });
}

/** Finds the four tools on `path` and asks gpioget for its version. HA_ERR_GPIO_UNAVAILABLE if missing. */
export async function detectGpiodTools(path: string, env: NodeJS.ProcessEnv): Promise<GpiodTools> {
  const names = ['gpioget', 'gpioset', 'gpiomon', 'gpiodetect'] as const;
  const found = names.map((n) => findOnPath(n, path));
  const missing = names.filter((_, i) => found[i] === undefined);
  if (missing.length > 0) {
    throw new HomeAgentError(
      'HA_ERR_GPIO_UNAVAILABLE',
      `the libgpiod tools are not installed (missing ${missing.join(', ')}; apt install gpiod)`,
    );
  }
  const [gpioget, gpioset, gpiomon, gpiodetect] = found as [string, string, string, string];
  let text: string;
  try {
    text = await runTool(gpioget, ['--version'], env);
  } catch (error) {
    throw new HomeAgentError(
      'HA_ERR_GPIO_UNAVAILABLE',
      `gpioget --version failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
  const firstLine = text.split('\n')[0]?.trim() ?? '';
  const match = /v(\d+)\.\d+/.exec(firstLine);
  const major = Number(match?.[1]);
  if (major !== 1 && major !== 2) {
    throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `unsupported libgpiod tools version: ${JSON.stringify(firstLine)}`);
  }
  return { major, versionText: firstLine, gpioget, gpioset, gpiomon, gpiodetect, stdbuf: findOnPath('stdbuf', path) };
}

/** Parses gpiodetect output (`gpiochip0 [pinctrl-bcm2711] (58 lines)` per chip). */
export function parseGpiodetect(text: string): GpioChipInfo[] {
  const chips: GpioChipInfo[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+\[(.*)\]\s+\((\d+) lines?\)/.exec(line.trim());
    if (m?.[1] !== undefined && m[2] !== undefined && m[3] !== undefined)
      chips.push({ name: m[1], label: m[2], ngpio: Number(m[3]), base: -1 });
  }
  return chips;
}

function biasArgs(tools: GpiodTools, bias: GpioBias): string[] {
  if (tools.major === 1) return bias === 'as-is' ? [] : ['-B', bias === 'disabled' ? 'disable' : bias];
  return bias === 'as-is' ? [] : ['-b', bias];
}

function chipArgs(tools: GpiodTools, chip: string): string[] {
  return tools.major === 1 ? [chip] : ['-c', chip];
}

/** gpioget arguments for one line, logical value (`-l` for active_low). */
export function getArgs(tools: GpiodTools, chip: string, offset: number, activeLow: boolean, bias: GpioBias): string[] {
  const flags = [...(activeLow ? ['-l'] : []), ...biasArgs(tools, bias)];
  return tools.major === 1 ? [...flags, chip, String(offset)] : [...flags, ...chipArgs(tools, chip), String(offset)];
}

/** gpioset arguments that set one line and keep holding it until the process is signalled. */
export function holdArgs(tools: GpiodTools, chip: string, offset: number, value: GpioValue, activeLow: boolean): string[] {
  const flags = activeLow ? ['-l'] : [];
  if (tools.major === 1) return ['--mode=signal', ...flags, chip, `${offset}=${value}`];
  return [...flags, ...chipArgs(tools, chip), `${offset}=${value}`];
}

/**
 * The gpiomon command for one line, both edges, physical levels (no `-l`: the active_low inversion
 * is done by the caller, the same way for both versions). v2 may block-buffer into a pipe, so it
 * runs under `stdbuf -oL` where stdbuf exists; v1 has `-b` (line-buffered).
 */
export function monitorCommand(tools: GpiodTools, chip: string, offset: number, bias: GpioBias): { file: string; args: string[] } {
  if (tools.major === 1) {
    return { file: tools.gpiomon, args: ['-b', ...biasArgs(tools, bias), '-F', '%e %o', chip, String(offset)] };
  }
  const args = [...biasArgs(tools, bias), '-e', 'both', '-F', '%e %o', ...chipArgs(tools, chip), String(offset)];
  return tools.stdbuf === undefined ? { file: tools.gpiomon, args } : { file: tools.stdbuf, args: ['-oL', tools.gpiomon, ...args] };
}

/** The logical value gpioget printed, in either version's format. */
export function parseGetOutput(text: string): GpioValue {
  const t = text.trim();
  if (t === '1' || /=active$/.test(t)) return 1;
  if (t === '0' || /=inactive$/.test(t)) return 0;
  throw new HomeAgentError('HA_ERR_GPIO_IO', `gpioget printed ${JSON.stringify(t.slice(0, 60))}, expected 0/1 or "<line>"=active|inactive`);
}

/** The physical level after an event line printed with `-F '%e %o'`; undefined for other lines. */
export function parseMonitorLine(tools: GpiodTools, line: string, offset: number): GpioValue | undefined {
  const m = /^(\d)\s+(\d+)$/.exec(line.trim());
  if (m === null || Number(m[2]) !== offset) return undefined;
  if (m[1] === '1') return 1;
  if (tools.major === 1 && m[1] === '0') return 0;
  if (tools.major === 2 && m[1] === '2') return 0;
  return undefined;
}
