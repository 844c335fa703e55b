/**
 * Reads an argument list the way GNU getopt_long does, so the cmd policy sees the same options
 * the program will: options may follow operands (GNU permutes; the child gets no POSIXLY_CORRECT),
 * `--` ends the options, short options cluster (`-uo` is `-u -o`), a short option's argument may
 * be attached (`-i.bak`, `-ofile`) or be the next item, and long options may be abbreviated to any
 * unambiguous prefix (`--out=x` is `--output=x`). Pure: no I/O.
 */

/** Whether an option takes an argument: never, always (attached or next item), or only attached. */
export type ArgKind = 'none' | 'required' | 'optional';

export interface LongOption {
  arg: ArgKind;
  /** The short option it is a synonym of, so rules name one canonical form. */
  short?: string;
}

/** The options one program understands. */
export interface OptionTable {
  short: Readonly<Record<string, ArgKind>>;
  long: Readonly<Record<string, LongOption>>;
}

export interface ParsedOption {
  /** `-x` for short options and long synonyms of one, `--name` for the others (full name when known). */
  name: string;
  /** The item as written. */
  written: string;
  value?: string;
  /** The value was taken from the next item (which therefore is not an option or operand). */
  separate: boolean;
  /** Absent from the table (or an ambiguous abbreviation). */
  known: boolean;
}

export interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
  /** Unknown options and ambiguous abbreviations, as written. */
  unknown: string[];
}

export function parseArgs(args: readonly string[], table: OptionTable): ParsedArgs {
  const options: ParsedOption[] = [];
  const operands: string[] = [];
  const unknown: string[] = [];
  let endOfOptions = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (endOfOptions || arg === '-' || !arg.startsWith('-')) {
      operands.push(arg);
      continue;
    }
    if (arg === '--') {
      endOfOptions = true;
      continue;
    }
    if (arg.startsWith('--')) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      const written = eq < 0 ? body : body.slice(0, eq);
      const inline = eq < 0 ? undefined : body.slice(eq + 1);
      const found = resolveLong(table, written);
      if (!found) {
        unknown.push(arg);
        options.push(withValue({ name: `--${written}`, written: arg, separate: false, known: false }, inline));
        continue;
      }
      const [fullName, def] = found;
      const name = def.short ? `-${def.short}` : `--${fullName}`;
      if (def.arg === 'required' && inline === undefined && i + 1 < args.length) {
        i++;
        options.push({ name, written: arg, value: args[i] as string, separate: true, known: true });
      } else {
        options.push(withValue({ name, written: arg, separate: false, known: true }, inline));
      }
      continue;
    }
    // A cluster of short options; an option taking an argument ends it.
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j] as string;
      const kind = table.short[letter];
      if (kind === undefined) {
        unknown.push(`-${letter}`);
        options.push({ name: `-${letter}`, written: arg, separate: false, known: false });
        continue;
      }
      if (kind === 'none') {
        options.push({ name: `-${letter}`, written: arg, separate: false, known: true });
        continue;
      }
      const rest = arg.slice(j + 1);
      if (rest !== '') {
        options.push({ name: `-${letter}`, written: arg, value: rest, separate: false, known: true });
      } else if (kind === 'required' && i + 1 < args.length) {
        i++;
        options.push({ name: `-${letter}`, written: arg, value: args[i] as string, separate: true, known: true });
      } else {
        options.push({ name: `-${letter}`, written: arg, separate: false, known: true });
      }
      break;
    }
  }
  return { options, operands, unknown };
}

/**
 * The long option `written` stands for: an exact name, or the one name it abbreviates. Like glibc,
 * an abbreviation of several names that are all synonyms of one short option is not ambiguous.
 */
export function resolveLong(table: OptionTable, written: string): [string, LongOption] | undefined {
  if (written === '') return undefined;
  const exact = table.long[written];
  if (exact) return [written, exact];
  const candidates = Object.keys(table.long).filter((name) => name.startsWith(written));
  const first = candidates[0];
  if (first === undefined) return undefined;
  const def = table.long[first] as LongOption;
  if (candidates.length === 1) return [first, def];
  const sameOption = def.short !== undefined && candidates.every((name) => table.long[name]?.short === def.short);
  return sameOption ? [first, def] : undefined;
}

function withValue(option: ParsedOption, value: string | undefined): ParsedOption {
  return value === undefined ? option : { ...option, value };
}
