/**
 * Finds what a sed script could do besides printing: run a command (`e`, `s///e`), write a file
 * (`w`, `W`, `s///w`) or read one (`r`, `R`). It follows GNU sed 4.9's parser (compile.c) closely
 * enough to find command boundaries; anything it does not understand is an error, and the policy
 * refuses scripts with errors, since GNU sed would refuse them too. GNU sed 4.9 lets a delimiter
 * stand inside a bracket expression (`s/[/]/x/`) and older versions do not, so the script is read
 * both ways and the union of what either reading finds counts. Pure: no I/O.
 */

/** `e`: runs commands; `w`: writes files; `r`: reads files. */
export type SedEffect = 'e' | 'w' | 'r';

export interface SedScan {
  effects: Set<SedEffect>;
  /** Why the script could not be read; such a script is refused. */
  error?: string;
}

/** Scans a script (several -e fragments joined by newlines, as GNU sed joins them). */
export function scanSedScript(script: string): SedScan {
  const effects = new Set<SedEffect>();
  const errors: Array<string | undefined> = [];
  for (const brackets of [true, false]) {
    const scanner = new SedScanner(script, brackets);
    let error: string | undefined;
    try {
      scanner.run();
    } catch (problem) {
      if (!(problem instanceof SedSyntaxError)) throw problem;
      error = problem.message;
    }
    errors.push(error);
    for (const effect of scanner.effects) effects.add(effect);
  }
  const [modern, old] = errors;
  if (modern !== undefined) return { effects, error: modern };
  if (old !== undefined) {
    return {
      effects,
      error: 'a delimiter inside [...] is read differently by older sed versions; escape it (\\/) or use another delimiter',
    };
  }
  return { effects };
}

class SedSyntaxError extends Error {}

const BLANKS = ' \t';
const DIGITS = '0123456789';
/** Commands that take no argument. */
const PLAIN_COMMANDS = '=dDgGhHnNpPxzF';
const LABEL_COMMANDS = ':btTv';

class SedScanner {
  readonly effects = new Set<SedEffect>();
  readonly #text: string;
  readonly #brackets: boolean;
  #pos = 0;
  #depth = 0;

  constructor(text: string, brackets: boolean) {
    this.#text = text;
    this.#brackets = brackets;
  }

  run(): void {
    for (;;) {
      this.#skip(' \t\n;');
      if (this.#peek() === undefined) break;
      if (this.#address()) {
        this.#skip(BLANKS);
        if (this.#peek() === ',') {
          this.#pos++;
          this.#skip(BLANKS);
          if (!this.#address()) this.#fail('expected an address after ","');
        }
      }
      this.#skip(BLANKS);
      while (this.#peek() === '!') {
        this.#pos++;
        this.#skip(BLANKS);
      }
      this.#command();
    }
    if (this.#depth > 0) this.#fail('unmatched "{"');
  }

  #command(): void {
    const command = this.#next();
    if (command === undefined) this.#fail('missing command');
    if (command === '{') {
      this.#depth++;
    } else if (command === '}') {
      if (this.#depth === 0) this.#fail('unexpected "}"');
      this.#depth--;
      this.#endOfCommand();
    } else if (command === '#') {
      this.#restOfLine();
    } else if (PLAIN_COMMANDS.includes(command)) {
      this.#endOfCommand();
    } else if ('lLqQ'.includes(command)) {
      this.#skip(BLANKS);
      this.#skip(DIGITS);
      this.#endOfCommand();
    } else if ('aic'.includes(command)) {
      this.#insertedText();
    } else if (LABEL_COMMANDS.includes(command)) {
      this.#label(command === ':');
    } else if (command === 's') {
      this.#substitute();
    } else if (command === 'y') {
      const delimiter = this.#delimiter();
      this.#delimited(delimiter, false);
      this.#delimited(delimiter, false);
      this.#endOfCommand();
    } else if (command === 'e') {
      this.effects.add('e');
      this.#restOfLine();
    } else if (command === 'r' || command === 'R') {
      this.effects.add('r');
      this.#restOfLine();
    } else if (command === 'w' || command === 'W') {
      this.effects.add('w');
      this.#restOfLine();
    } else {
      this.#fail(`unknown command "${command}"`);
    }
  }

  /** One address; false (nothing consumed) when there is none. */
  #address(): boolean {
    const ch = this.#peek();
    if (ch === '/' || ch === '\\') {
      this.#pos++;
      this.#delimited(ch === '/' ? '/' : this.#delimiter(), true);
      this.#skip('IM');
    } else if (ch !== undefined && DIGITS.includes(ch)) {
      this.#skip(DIGITS);
      if (this.#peek() === '~') {
        this.#pos++;
        this.#skip(DIGITS);
      }
    } else if (ch === '$') {
      this.#pos++;
    } else if (ch === '+' || ch === '~') {
      this.#pos++;
      this.#skip(DIGITS);
    } else {
      return false;
    }
    return true;
  }

  #substitute(): void {
    const delimiter = this.#delimiter();
    this.#delimited(delimiter, true);
    this.#delimited(delimiter, false);
    for (;;) {
      const flag = this.#peek();
      if (flag === undefined || flag === '}' || flag === '#') return;
      this.#pos++;
      if (flag === '\n' || flag === ';') return;
      if (flag === 'e') this.effects.add('e');
      else if (flag === 'w') {
        this.effects.add('w');
        this.#restOfLine();
        return;
      } else if (!'gpiImM \t'.includes(flag) && !DIGITS.includes(flag)) this.#fail(`unknown flag "${flag}" of the s command`);
    }
  }

  /** The delimiter of `s`, `y` or a `\cREGEXc` address: one ASCII character, not a newline or backslash. */
  #delimiter(): string {
    const ch = this.#next();
    if (ch === undefined || ch === '\n' || ch === '\\' || ch.charCodeAt(0) > 0x7f) this.#fail('bad delimiter');
    return ch;
  }

  /** Text up to the next unescaped `delimiter`; in a regex, optionally past bracket expressions. */
  #delimited(delimiter: string, regex: boolean): void {
    for (;;) {
      const ch = this.#next();
      if (ch === undefined || ch === '\n') this.#fail('unterminated expression');
      if (ch === delimiter) return;
      if (ch === '\\') {
        if (this.#next() === undefined) this.#fail('unterminated expression');
      } else if (ch === '[' && regex && this.#brackets) {
        this.#bracketExpression();
      }
    }
  }

  /** After `[`: up to the closing `]`, where a leading `]` and `[:class:]`-like items do not close it. */
  #bracketExpression(): void {
    if (this.#peek() === '^') this.#pos++;
    if (this.#peek() === ']') this.#pos++;
    for (;;) {
      const ch = this.#next();
      if (ch === undefined || ch === '\n') this.#fail('unterminated bracket expression');
      if (ch === ']') return;
      const kind = this.#peek();
      if (ch === '[' && kind !== undefined && ':.='.includes(kind)) {
        const close = this.#text.indexOf(`${kind}]`, this.#pos + 1);
        if (close < 0) this.#fail('unterminated bracket expression');
        this.#pos = close + 2;
      }
    }
  }

  /** The text of a, i and c: up to a newline not escaped by a backslash. */
  #insertedText(): void {
    this.#skip(BLANKS);
    if (this.#peek() === undefined) this.#fail('a, i and c need text');
    for (;;) {
      const ch = this.#next();
      if (ch === undefined || ch === '\n') return;
      if (ch === '\\') this.#pos++;
    }
  }

  /** Labels end at whitespace or `;`; whatever follows is read as further commands. */
  #label(required: boolean): void {
    this.#skip(BLANKS);
    const start = this.#pos;
    for (let ch = this.#peek(); ch !== undefined && !' \t\n;'.includes(ch); ch = this.#peek()) this.#pos++;
    if (required && this.#pos === start) this.#fail('":" needs a label');
  }

  #endOfCommand(): void {
    this.#skip(BLANKS);
    const ch = this.#peek();
    if (ch === undefined || ch === '}' || ch === '#') return;
    if (ch === '\n' || ch === ';') {
      this.#pos++;
      return;
    }
    this.#fail(`extra characters after a command ("${ch}")`);
  }

  #restOfLine(): void {
    const end = this.#text.indexOf('\n', this.#pos);
    this.#pos = end < 0 ? this.#text.length : end + 1;
  }

  #skip(chars: string): void {
    for (let ch = this.#peek(); ch !== undefined && chars.includes(ch); ch = this.#peek()) this.#pos++;
  }

  #peek(): string | undefined {
    return this.#text[this.#pos];
  }

  #next(): string | undefined {
    const ch = this.#text[this.#pos];
    if (ch !== undefined) this.#pos++;
    return ch;
  }

  #fail(message: string): never {
    throw new SedSyntaxError(`${message} at character ${this.#pos}`);
  }
}
