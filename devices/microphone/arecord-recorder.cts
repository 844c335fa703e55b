/**
 * The recorder node-record-lpcm16 runs (its `recorder` option takes an absolute module path). Its own
 * arecord recorder hard-codes S16_LE and passes no spawn options, so a microphone that only offers
 * S32_LE could not be read and the child would not get the environment the microphone was given
 * (PATH, ALSA_CONFIG_PATH). This one builds the same arecord command with the configured format,
 * raw output and the given environment. CommonJS because the package require()s it.
 */
interface RecorderOptions {
  device: string;
  sampleRate: number;
  channels: number;
  format: string;
  env?: NodeJS.ProcessEnv;
}

function arecordRecorder(options: RecorderOptions) {
  return {
    cmd: 'arecord',
    args: [
      '-q',
      '-D',
      options.device,
      '-t',
      'raw',
      '-f',
      options.format,
      '-r',
      String(options.sampleRate),
      '-c',
      String(options.channels),
      '-',
    ],
    spawnOptions: { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] },
  };
}

export = arecordRecorder;
