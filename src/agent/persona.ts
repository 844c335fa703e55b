/**
 * The persona: the first block of every system prompt, read verbatim from a file the household
 * owns (<data_dir>/personal/personal.md unless configured otherwise). Nothing the model says can
 * change it; a person edits the file. A missing file is created from the default that ships in
 * config/persona.md, and the text is re-read when the file changes.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../log/logger.js';

/** Longer personas are cut: the persona must not crowd out the rest of the prompt. */
export const PERSONA_MAX_CHARS = 8000;

export class Persona {
  readonly #file: () => string;
  readonly #defaultFile: string;
  readonly #log: Logger;
  #cached: { file: string; mtimeMs: number; text: string } | undefined;

  constructor(options: { file: () => string; defaultFile: string; log: Logger }) {
    this.#file = options.file;
    this.#defaultFile = options.defaultFile;
    this.#log = options.log;
  }

  text(): string {
    const file = this.#file();
    try {
      if (!existsSync(file)) {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        copyFileSync(this.#defaultFile, file);
        this.#log.info({ file }, 'created the persona file from the default');
      }
      const mtimeMs = statSync(file).mtimeMs;
      if (this.#cached?.file !== file || this.#cached.mtimeMs !== mtimeMs) {
        let text = readFileSync(file, 'utf8').trim();
        if (text.length > PERSONA_MAX_CHARS) {
          this.#log.warn({ file, chars: text.length, max: PERSONA_MAX_CHARS }, 'persona file is too long; using its beginning');
          text = text.slice(0, PERSONA_MAX_CHARS);
        }
        this.#cached = { file, mtimeMs, text };
      }
      return this.#cached.text;
    } catch (error) {
      // The household's file is unreadable: fall back to the shipped default rather than no persona.
      this.#log.error({ file, err: error }, 'cannot read the persona file; using the default persona');
      return readFileSync(this.#defaultFile, 'utf8').trim();
    }
  }
}
