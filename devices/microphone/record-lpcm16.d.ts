/** The part of node-record-lpcm16 1.0.1 (which ships no types) that the microphone uses. */
declare module 'node-record-lpcm16' {
  import type { ChildProcess } from 'node:child_process';
  import type { Readable } from 'node:stream';

  namespace lpcm16 {
    interface RecordOptions {
      /** A recorder name bundled with the package, or an absolute path to a module returning {cmd, args, spawnOptions}. */
      recorder: string;
      sampleRate: number;
      channels: number;
      audioType?: string;
      device?: string;
      /** Further options are handed to the recorder module as they are. */
      [option: string]: unknown;
    }

    interface Recording {
      /** The recorder's child process (stdout is the audio). */
      readonly process: ChildProcess;
      stream(): Readable;
      stop(): void;
    }
  }

  // CommonJS without names Node can detect, so only the default import works from ESM.
  const lpcm16: { record(options: lpcm16.RecordOptions): lpcm16.Recording };
  export = lpcm16;
}
