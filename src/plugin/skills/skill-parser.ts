/**
 * Reads one skill folder in the Agent Skills / OpenClaw format: `SKILL.md` (YAML front matter
 * between `---` lines, then markdown instructions), an optional `skill.json` whose name,
 * description, version and author override the front matter, and an optional `scripts/` folder.
 *
 * The parser only reads text. Scripts are listed by name, never run (they run only through
 * cmd_run and its policy), and headings it does not recognise stay plain text: nothing in a
 * skill ever becomes a tool or an action. Every problem that makes a skill unusable throws
 * HA_ERR_SKILL_INVALID naming the file and the fix; softer problems are collected as warnings.
 */
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { isMap, isScalar, parseDocument } from 'yaml';
import { describeError, HomeAgentError } from '../../shared/errors.js';
import { PLUGIN_NAME } from '../manifest.js';

export const SKILL_FILE = 'SKILL.md';
export const SKILL_JSON_FILE = 'skill.json';
export const SKILL_SCRIPTS_DIR = 'scripts';
/** A skill is a page of instructions; anything larger is a mistake (or not a skill). */
export const SKILL_FILE_MAX_BYTES = 256 * 1024;
export const SKILL_JSON_MAX_BYTES = 64 * 1024;
/** The Agent Skills limit; the description goes into every prompt's index. */
export const SKILL_DESCRIPTION_MAX_CHARS = 1024;
/** Same bound as the manifest's `author`. */
export const SKILL_AUTHOR_MAX_CHARS = 200;
export const SKILL_SCRIPTS_MAX = 100;
const SCRIPTS_MAX_DEPTH = 4;
/** YAML aliases can expand exponentially; front matter never needs many. */
const YAML_MAX_ALIASES = 50;

/** The template sections a skill may have, under English or Chinese headings. */
export interface SkillSections {
  /** "When to use" / 使用时机. */
  when_to_use?: string;
  /** "Steps" / 操作步骤: one entry per `### step-N` sub-heading, else per numbered (or bulleted) item. */
  steps?: string[];
  /** "Notes" / 注意事项. */
  notes?: string;
}

export interface ParsedSkill {
  /** The skill's identity (front matter or skill.json), following the plugin name rules. */
  name: string;
  description: string;
  /** Normalised to `x.y.z` (a `1` or `1.2` is padded); absent when missing or unusable. */
  version?: string;
  author?: string;
  /** The front matter's `metadata` mapping, as written (e.g. OpenClaw's `openclaw.requires`). */
  metadata?: Record<string, unknown>;
  /** The markdown after the front matter: the instructions, complete. */
  body: string;
  sections: SkillSections;
  /** Titles of headings that are not template sections; they stay text in `body`. */
  other_headings: string[];
  /** Files under scripts/ (relative to it, `/`-separated), listed only. */
  scripts: string[];
  warnings: string[];
}

export interface ParseSkillTextOptions {
  /** The folder the skill lives in; a different `name` is a warning (the name wins). */
  folderName?: string;
  /** The parsed content of skill.json, which overrides name, description, version and author. */
  overrides?: unknown;
  /** Names the file in messages; default `<folderName>/SKILL.md`. */
  source?: string;
}

export interface ParseSkillOptions {
  /** The instructions file relative to the folder (a manifest's `entry`); default SKILL.md. */
  file?: string;
}

/** Reads and checks the skill in `dir`; throws HA_ERR_SKILL_INVALID when it cannot be used. */
export function parseSkill(dir: string, options: ParseSkillOptions = {}): ParsedSkill {
  const root = realDir(dir);
  const file = join(dir, options.file ?? SKILL_FILE);
  const text = decodeSkillBytes(readInside(root, file, SKILL_FILE_MAX_BYTES, true), file);
  const overrides = readSkillJson(root, join(dir, SKILL_JSON_FILE));
  const skill = parseSkillText(text, { folderName: basename(root), overrides, source: file });
  skill.scripts = listScripts(root, skill.warnings);
  return skill;
}

/** Parses SKILL.md text (scripts are left empty: they need the folder). */
export function parseSkillText(text: string, options: ParseSkillTextOptions = {}): ParsedSkill {
  const where = options.source ?? `${options.folderName ?? 'skill'}/${SKILL_FILE}`;
  const invalid = (problem: string) => new HomeAgentError('HA_ERR_SKILL_INVALID', `${where}: ${problem}`);
  const size = Buffer.byteLength(text, 'utf8');
  if (size > SKILL_FILE_MAX_BYTES) throw invalid(tooLarge(size, SKILL_FILE_MAX_BYTES));
  if (text.includes('\u0000')) throw invalid('the file contains NUL bytes: it is binary, not markdown text');

  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const warnings: string[] = [];
  const { data, versionSource, body } = splitFrontMatter(lines, invalid, warnings);
  const fields = mergeOverrides(data, versionSource, options.overrides, invalid, warnings);

  const name = checkName(fields.name, invalid);
  if (options.folderName !== undefined && name !== options.folderName) {
    warnings.push(`name "${name}" differs from the folder name "${options.folderName}"; the skill is known as "${name}"`);
  }
  const skill: ParsedSkill = {
    name,
    description: checkDescription(fields.description, invalid),
    body,
    sections: {},
    other_headings: [],
    scripts: [],
    warnings,
  };
  const version = checkVersion(fields.version, warnings);
  if (version !== undefined) skill.version = version;
  const author = checkAuthor(fields.author, warnings);
  if (author !== undefined) skill.author = author;
  if (data.metadata !== undefined && data.metadata !== null) {
    if (isPlainObject(data.metadata)) skill.metadata = data.metadata;
    else warnings.push('front matter metadata is not a mapping; it is ignored');
  }
  if (body === '') warnings.push('there are no instructions after the front matter');
  const outline = readOutline(body, warnings);
  skill.sections = outline.sections;
  skill.other_headings = outline.other_headings;
  return skill;
}

// ---------------------------------------------------------------------------------------------
// Front matter

interface Field {
  value: unknown;
  from: 'front matter' | 'skill.json';
}

type Invalid = (problem: string) => HomeAgentError;

const FENCE = /^---[ \t]*$/;
/** `...` is YAML's own end-of-document marker; some generators close front matter with it. */
const FENCE_END = /^(---|\.\.\.)[ \t]*$/;

function splitFrontMatter(
  lines: string[],
  invalid: Invalid,
  warnings: string[],
): { data: Record<string, unknown>; versionSource: string | undefined; body: string } {
  let start = 0;
  while (start < lines.length && (lines[start] ?? '').trim() === '') start++;
  if (start >= lines.length || !FENCE.test(lines[start] ?? '')) {
    throw invalid('no front matter: the file must start with a line "---", then "name:" and "description:", then "---"');
  }
  let end = start + 1;
  while (end < lines.length && !FENCE_END.test(lines[end] ?? '')) end++;
  if (end >= lines.length) {
    throw invalid(`the front matter opened on line ${start + 1} is not terminated: add a line "---" after its last key`);
  }
  const doc = parseDocument(lines.slice(start + 1, end).join('\n'), { uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const line = (error.linePos?.[0].line ?? 1) + start + 1;
    const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    throw invalid(`invalid YAML in the front matter at line ${line}: ${message}`);
  }
  for (const warning of doc.warnings) warnings.push(`front matter: ${warning.message.split('\n')[0] ?? ''}`);
  if (!isMap(doc.contents)) {
    const got = doc.contents === null ? 'it is empty' : `got ${describeYaml(doc.toJS({ maxAliasCount: YAML_MAX_ALIASES }))}`;
    throw invalid(`the front matter must be a mapping of keys such as "name: my-skill" (${got})`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: YAML_MAX_ALIASES });
  } catch (cause) {
    throw invalid(`invalid YAML in the front matter: ${describeError(cause)}`);
  }
  // YAML reads `version: 1.10` as the number 1.1; the source text keeps what the author wrote.
  const versionNode = doc.get('version', true);
  const versionSource = isScalar(versionNode) && typeof versionNode.value === 'number' ? versionNode.source : undefined;
  const body = lines
    .slice(end + 1)
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
  return { data: data as Record<string, unknown>, versionSource, body };
}

const OVERRIDABLE = ['name', 'description', 'version', 'author'] as const;
type OverridableKey = (typeof OVERRIDABLE)[number];

function mergeOverrides(
  data: Record<string, unknown>,
  versionSource: string | undefined,
  overrides: unknown,
  invalid: Invalid,
  warnings: string[],
): Record<OverridableKey, Field> {
  const fields = {} as Record<OverridableKey, Field>;
  for (const key of OVERRIDABLE) fields[key] = { value: data[key], from: 'front matter' };
  if (versionSource !== undefined) fields.version.value = versionSource;
  if (overrides === undefined) return fields;
  if (!isPlainObject(overrides)) throw invalid(`${SKILL_JSON_FILE} must hold a JSON object (got ${describeYaml(overrides)})`);
  for (const key of OVERRIDABLE) {
    if (!(key in overrides)) continue;
    const before = fields[key].value;
    if (key === 'name' && typeof before === 'string' && before !== overrides[key]) {
      warnings.push(`${SKILL_JSON_FILE} name ${JSON.stringify(overrides[key])} overrides the front matter name "${before}"`);
    }
    fields[key] = { value: overrides[key], from: 'skill.json' };
  }
  if ('entry' in overrides && overrides.entry !== SKILL_FILE) {
    warnings.push(
      `${SKILL_JSON_FILE} entry ${JSON.stringify(overrides.entry)} is ignored; a skill's instructions are always ${SKILL_FILE}`,
    );
  }
  return fields;
}

function checkName(field: Field, invalid: Invalid): string {
  const { value, from } = field;
  if (value === undefined || value === null || value === '') throw invalid(`missing name: add "name: <skill-name>" to the ${from}`);
  if (typeof value !== 'string') throw invalid(`name must be text (the ${from} has ${describeYaml(value)})`);
  if (!PLUGIN_NAME.test(value)) {
    throw invalid(
      `invalid name ${JSON.stringify(value)} in the ${from}: use 1-64 lowercase letters, digits, "-", "_" or ".", not starting with a dot`,
    );
  }
  return value;
}

function checkDescription(field: Field, invalid: Invalid): string {
  const { value, from } = field;
  if (value === undefined || value === null)
    throw invalid(`missing description: add "description: <what the skill is for>" to the ${from}`);
  if (typeof value !== 'string') throw invalid(`description must be text (the ${from} has ${describeYaml(value)})`);
  const description = value.trim();
  if (description === '') throw invalid(`the description in the ${from} is empty`);
  const length = [...description].length;
  if (length > SKILL_DESCRIPTION_MAX_CHARS) {
    throw invalid(`the description in the ${from} is ${length} characters; the limit is ${SKILL_DESCRIPTION_MAX_CHARS}`);
  }
  return description;
}

const VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?([-+][0-9A-Za-z.-]+)?$/;

function checkVersion(field: Field, warnings: string[]): string | undefined {
  const { value, from } = field;
  if (value === undefined || value === null) return undefined;
  const match = typeof value === 'string' || typeof value === 'number' ? VERSION.exec(String(value).trim()) : null;
  if (!match) {
    warnings.push(`version ${JSON.stringify(value)} in the ${from} is not a version like 1.2.0; it is ignored`);
    return undefined;
  }
  return `${Number(match[1])}.${Number(match[2] ?? 0)}.${Number(match[3] ?? 0)}${match[4] ?? ''}`;
}

function checkAuthor(field: Field, warnings: string[]): string | undefined {
  const { value, from } = field;
  if (value === undefined || value === null) return undefined;
  // npm-style `author: {name, email}` is common enough to accept.
  const text = isPlainObject(value) && typeof value.name === 'string' ? value.name : value;
  if (typeof text !== 'string' || text.trim() === '' || text.length > SKILL_AUTHOR_MAX_CHARS) {
    warnings.push(`author in the ${from} must be text of 1-${SKILL_AUTHOR_MAX_CHARS} characters; it is ignored`);
    return undefined;
  }
  return text.trim();
}

// ---------------------------------------------------------------------------------------------
// Markdown outline

type SectionKind = keyof SkillSections;

/** Recognised section titles, compared after {@link headingKey}. */
const SECTION_TITLES: Record<SectionKind, readonly string[]> = {
  when_to_use: [
    'when to use',
    'when to use this skill',
    'when to use it',
    'use when',
    'usage',
    '使用时机',
    '何时用',
    '何时使用',
    '使用场景',
    '适用场景',
  ],
  steps: ['steps', 'instructions', 'procedure', 'how to', '操作步骤', '步骤', '执行步骤'],
  notes: ['notes', 'note', 'caveats', 'cautions', 'warnings', 'tips', '注意事项', '注意', '备注'],
};

interface Heading {
  level: number;
  title: string;
  /** Index into the body's lines. */
  line: number;
}

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;

function readOutline(body: string, warnings: string[]): { sections: SkillSections; other_headings: string[] } {
  const lines = body.split('\n');
  const headings = findHeadings(lines);
  const sections: SkillSections = {};
  const other_headings: string[] = [];
  let i = 0;
  while (i < headings.length) {
    const heading = headings[i] as Heading;
    let next = i + 1;
    while (next < headings.length && (headings[next] as Heading).level > heading.level) next++;
    const kind = sectionKind(heading.title);
    if (kind === undefined) {
      // Unknown: only its title is noted; sub-headings are looked at on their own.
      other_headings.push(heading.title);
      i++;
      continue;
    }
    const end = headings[next]?.line ?? lines.length;
    if (sections[kind] !== undefined) warnings.push(`the "${heading.title}" section appears more than once; the parts are joined`);
    if (kind === 'steps') {
      sections.steps = [...(sections.steps ?? []), ...readSteps(lines, heading, headings.slice(i + 1, next), end)];
    } else {
      const text = lines
        .slice(heading.line + 1, end)
        .join('\n')
        .trim();
      sections[kind] = sections[kind] === undefined ? text : `${sections[kind]}\n\n${text}`;
    }
    i = next;
  }
  return { sections, other_headings };
}

/** ATX headings outside fenced code blocks (a `# comment` in a shell snippet is not a heading). */
function findHeadings(lines: string[]): Heading[] {
  const headings: Heading[] = [];
  let fence: string | undefined;
  lines.forEach((line, index) => {
    const open = FENCE_OPEN.exec(line)?.[1];
    if (fence !== undefined) {
      if (open !== undefined && open[0] === fence[0] && open.length >= fence.length && line.trim() === open) fence = undefined;
      return;
    }
    if (open !== undefined) {
      fence = open;
      return;
    }
    const match = ATX_HEADING.exec(line);
    if (!match) return;
    const title = (match[2] ?? '').replace(/(^|[ \t]+)#+$/, '').trim();
    if (title !== '') headings.push({ level: (match[1] ?? '#').length, title, line: index });
  });
  return headings;
}

function headingKey(title: string): string {
  return title
    .replace(/^[*_]+|[*_]+$/g, '')
    .replace(/[:：]\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

function sectionKind(title: string): SectionKind | undefined {
  const key = headingKey(title);
  for (const kind of Object.keys(SECTION_TITLES) as SectionKind[]) {
    if (SECTION_TITLES[kind].includes(key)) return kind;
  }
  return undefined;
}

/** A step heading that is only a label ("step-2", "Step 3", "第2步") adds nothing to its text. */
const BARE_STEP_LABEL = /^(step[\s_-]*\d+|第?\s*[0-9一二三四五六七八九十]+\s*步|步骤\s*[0-9一二三四五六七八九十]+)[:：.]?$/i;
const NUMBERED_ITEM = /^ {0,3}\d{1,3}[.)、][ \t]+(.*)$/;
const BULLET_ITEM = /^ {0,3}[-*+][ \t]+(.*)$/;

function readSteps(lines: string[], section: Heading, children: Heading[], end: number): string[] {
  if (children.length > 0) {
    // `### step-N` style: each sub-heading at the shallowest level is one step.
    const level = Math.min(...children.map((h) => h.level));
    const tops = children.filter((h) => h.level === level);
    return tops
      .map((heading, index) => {
        const stepEnd = tops[index + 1]?.line ?? end;
        const content = lines
          .slice(heading.line + 1, stepEnd)
          .join('\n')
          .trim();
        if (BARE_STEP_LABEL.test(heading.title)) return content === '' ? heading.title : content;
        return content === '' ? heading.title : `${heading.title}\n${content}`;
      })
      .filter((step) => step !== '');
  }
  const content = lines.slice(section.line + 1, end);
  const numbered = listItems(content, NUMBERED_ITEM);
  if (numbered.length > 0) return numbered;
  const bullets = listItems(content, BULLET_ITEM);
  if (bullets.length > 0) return bullets;
  const text = content.join('\n').trim();
  return text === '' ? [] : [text];
}

/**
 * Top-level list items with their continuation lines and code blocks; a blank line followed by
 * unindented text ends the list.
 */
function listItems(lines: string[], item: RegExp): string[] {
  const items: string[][] = [];
  let current: string[] | undefined;
  let afterBlank = false;
  let fence: string | undefined;
  for (const line of lines) {
    const open = FENCE_OPEN.exec(line)?.[1];
    if (fence !== undefined || open !== undefined) {
      // Code blocks belong to the item they follow; a "1." inside one starts nothing.
      if (fence === undefined) fence = open;
      else if (open !== undefined && open[0] === fence[0] && open.length >= fence.length && line.trim() === open) fence = undefined;
      current?.push(line.trimEnd());
      afterBlank = false;
      continue;
    }
    const match = item.exec(line);
    if (match) {
      current = [(match[1] ?? '').trim()];
      items.push(current);
      afterBlank = false;
    } else if (current !== undefined) {
      if (line.trim() === '') {
        afterBlank = true;
      } else if (/^[ \t]/.test(line) || !afterBlank) {
        if (afterBlank) current.push('');
        current.push(line.trim());
        afterBlank = false;
      } else {
        current = undefined;
      }
    }
  }
  return items.map((parts) => parts.join('\n').trim()).filter((text) => text !== '');
}

// ---------------------------------------------------------------------------------------------
// Files

function realDir(dir: string): string {
  let root: string;
  try {
    root = realpathSync(dir);
  } catch (cause) {
    throw new HomeAgentError('HA_ERR_SKILL_INVALID', `${dir}: the skill folder cannot be read (${describeError(cause)})`, { cause });
  }
  if (!statSync(root).isDirectory()) throw new HomeAgentError('HA_ERR_SKILL_INVALID', `${dir}: not a folder`);
  return root;
}

function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Reads a file that must stay inside the skill folder; undefined when it is absent and optional. */
function readInside(root: string, file: string, limit: number, required: true): Buffer;
function readInside(root: string, file: string, limit: number, required: false): Buffer | undefined;
function readInside(root: string, file: string, limit: number, required: boolean): Buffer | undefined {
  const invalid = (problem: string, cause?: unknown) => new HomeAgentError('HA_ERR_SKILL_INVALID', `${file}: ${problem}`, { cause });
  let real: string;
  try {
    real = realpathSync(file);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') {
      if (!required) return undefined;
      throw invalid(`missing ${basename(file)}: a skill folder needs a ${basename(file)} with front matter and instructions`, cause);
    }
    throw invalid(`cannot be read (${describeError(cause)})`, cause);
  }
  if (!isInside(root, real)) throw invalid('is a link leading outside the skill folder; copy the file into the folder instead');
  const stats = statSync(real);
  if (!stats.isFile()) throw invalid('is not a regular file');
  if (stats.size > limit) throw invalid(tooLarge(stats.size, limit));
  const bytes = readFileSync(real);
  // The file may have grown between the stat and the read.
  if (bytes.length > limit) throw invalid(tooLarge(bytes.length, limit));
  return bytes;
}

function decodeSkillBytes(bytes: Buffer, file: string): string {
  if (bytes.includes(0))
    throw new HomeAgentError('HA_ERR_SKILL_INVALID', `${file}: the file contains NUL bytes: it is binary, not markdown text`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new HomeAgentError('HA_ERR_SKILL_INVALID', `${file}: the file is not UTF-8 text; save it as UTF-8`, { cause });
  }
}

function readSkillJson(root: string, file: string): unknown {
  const bytes = readInside(root, file, SKILL_JSON_MAX_BYTES, false);
  if (bytes === undefined) return undefined;
  try {
    return JSON.parse(decodeSkillBytes(bytes, file).replace(/^\uFEFF/, ''));
  } catch (cause) {
    if (cause instanceof HomeAgentError) throw cause;
    throw new HomeAgentError('HA_ERR_SKILL_INVALID', `${file}: not valid JSON (${describeError(cause)})`, { cause });
  }
}

/**
 * Names of the files under scripts/. Links are listed only when they lead to a file inside the
 * skill folder: a skill must not point cmd_run at something it does not ship.
 */
function listScripts(root: string, warnings: string[]): string[] {
  const top = join(root, SKILL_SCRIPTS_DIR);
  let real: string;
  try {
    real = realpathSync(top);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'ENOENT') warnings.push(`${SKILL_SCRIPTS_DIR}/ cannot be read (${describeError(cause)})`);
    return [];
  }
  if (!isInside(root, real)) {
    warnings.push(`${SKILL_SCRIPTS_DIR}/ is a link leading outside the skill folder; it is ignored`);
    return [];
  }
  if (!statSync(real).isDirectory()) {
    warnings.push(`${SKILL_SCRIPTS_DIR} is not a folder; it is ignored`);
    return [];
  }
  const scripts: string[] = [];
  let full = false;
  const walk = (dir: string, prefix: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (cause) {
      warnings.push(`${SKILL_SCRIPTS_DIR}/${prefix} cannot be read (${describeError(cause)})`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const rel = `${prefix}${entry.name}`;
      const path = join(dir, entry.name);
      if (full) return;
      if (scripts.length >= SKILL_SCRIPTS_MAX) {
        full = true;
        warnings.push(`more than ${SKILL_SCRIPTS_MAX} files under ${SKILL_SCRIPTS_DIR}/; the rest are not listed`);
        return;
      }
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(path);
        } catch {
          warnings.push(`${SKILL_SCRIPTS_DIR}/${rel} is a broken link; it is ignored`);
          continue;
        }
        if (!isInside(root, target)) warnings.push(`${SKILL_SCRIPTS_DIR}/${rel} is a link leading outside the skill folder; it is ignored`);
        else if (statSync(target).isFile()) scripts.push(rel);
        else warnings.push(`${SKILL_SCRIPTS_DIR}/${rel} links to something other than a file; it is ignored`);
      } else if (entry.isDirectory()) {
        if (depth < SCRIPTS_MAX_DEPTH) walk(path, `${rel}/`, depth + 1);
        else warnings.push(`${SKILL_SCRIPTS_DIR}/${rel} is nested too deeply; it is not listed`);
      } else if (entry.isFile()) {
        scripts.push(rel);
      } else {
        warnings.push(`${SKILL_SCRIPTS_DIR}/${rel} is not a regular file; it is ignored`);
      }
    }
  };
  walk(real, '', 1);
  return scripts;
}

// ---------------------------------------------------------------------------------------------

function tooLarge(size: number, limit: number): string {
  return `the file is ${size} bytes; the limit is ${limit} (${limit / 1024} KiB)`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeYaml(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null || value === undefined) return 'nothing';
  if (typeof value === 'object') return 'a mapping';
  return `the ${typeof value} ${JSON.stringify(value)}`.slice(0, 80);
}
