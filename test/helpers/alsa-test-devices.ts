/**
 * ALSA devices without a sound card, for tests that drive the real aplay and arecord: an ALSA
 * config of `file`-plugin PCMs written into a test directory and activated through
 * ALSA_CONFIG_PATH in the environment handed to the child (never process.env). Playback PCMs write
 * what they are given to a file (raw bytes or a WAV); capture PCMs read an `infile` of raw bytes.
 * Neither is paced: playback of 8 s takes milliseconds, and capture goes on past the end of the
 * infile with stale data, so always bound what you record (duration, or stop after N bytes).
 * See /work/shared/reference/dependencies.md, "Audio without a sound card".
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type PlaybackFileFormat = 'raw' | 'wav';

export interface AlsaTestDevicesOptions {
  /** File format of the default playback PCM (default raw). */
  defaultFormat?: PlaybackFileFormat;
  /** Further playback PCMs by name, each writing its own file. */
  playback?: Record<string, PlaybackFileFormat>;
  /** The raw file the `mic` capture PCM reads; no `mic` without it. */
  micInfile?: string;
  /** Further capture PCMs by name, each reading its raw infile. */
  capture?: Record<string, string>;
}

export interface AlsaTestDevices {
  /** process.env plus ALSA_CONFIG_PATH naming the test config after the system one. */
  env: NodeJS.ProcessEnv;
  /** The config file written. */
  confPath: string;
  /** The file a playback PCM ("default" or a named one) writes. */
  outPath(name: string): string;
}

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

function pcmName(name: string): string {
  if (!NAME.test(name)) throw new Error(`alsa-test-devices: "${name}" is not a simple PCM name`);
  return name;
}

function quoted(path: string): string {
  if (/["\\\n]/.test(path)) throw new Error(`alsa-test-devices: path ${path} cannot be quoted in an ALSA config`);
  return `"${path}"`;
}

export function alsaTestDevices(dir: string, options: AlsaTestDevicesOptions = {}): AlsaTestDevices {
  const formats: Record<string, PlaybackFileFormat> = { default: options.defaultFormat ?? 'raw', ...options.playback };
  const outPath = (name: string): string => {
    const format = formats[name];
    if (format === undefined) throw new Error(`alsa-test-devices: no playback PCM named ${name}`);
    return join(dir, `out_${name}.${format}`);
  };
  const lines: string[] = [];
  for (const [name, format] of Object.entries(formats)) {
    const pcm = name === 'default' ? '!default' : pcmName(name);
    lines.push(`pcm.${pcm} { type file; slave.pcm "null"; file ${quoted(outPath(name))}; format "${format}" }`);
  }
  const capture: Record<string, string> = { ...options.capture };
  if (options.micInfile !== undefined) capture.mic = options.micInfile;
  for (const [name, infile] of Object.entries(capture)) {
    lines.push(`pcm.${pcmName(name)} { type file; slave.pcm "null"; file "/dev/null"; infile ${quoted(infile)}; format "raw" }`);
  }
  const confPath = join(dir, 'test-asound.conf');
  writeFileSync(confPath, `${lines.join('\n')}\n`);
  return { env: { ...process.env, ALSA_CONFIG_PATH: `/usr/share/alsa/alsa.conf:${confPath}` }, confPath, outPath };
}
