/**
 * The loaded skills, by name, and what the model sees of them: a short index in the prompt (name
 * and description only, so a hundred skills cost a few lines) and two read-only tools, skill_list
 * and skill_info, that hand out the full instructions when the model decides to follow one.
 * Skills never add tools of their own; their scripts run only through cmd_run and its policy.
 */
import { join } from 'node:path';
import { HomeAgentError } from '../../shared/errors.js';
import { type ToolDefinition, ToolError } from '../../shared/tool.js';
import { type ParsedSkill, SKILL_SCRIPTS_DIR } from './skill-parser.js';

/** Owner of skill_list and skill_info in the tool registry and the prompt's tool summary. */
export const SKILLS_TOOL_OWNER = 'skills';
export const SKILL_LIST_TOOL = 'skill_list';
export const SKILL_INFO_TOOL = 'skill_info';
/** The prompt index stays short whatever is installed; skill_list has the rest. */
export const PROMPT_INDEX_MAX_SKILLS = 50;
export const PROMPT_INDEX_DESCRIPTION_CHARS = 200;
/** skill_info's instructions beyond this are cut (a SKILL.md may be up to 256 KiB). */
export const SKILL_INFO_BODY_CHARS = 32_000;

export const SCRIPTS_NOTE =
  'Scripts are never run by the skill itself. Run one only with cmd_run (argv such as ["sh", "<scripts_dir>/<name>"]); ' +
  'the cmd policy decides whether it may run, and if it refuses, tell the person what the script would have done.';

export interface LoadedSkill {
  skill: ParsedSkill;
  /** Who added it: `plugin:<name>` for skills loaded by the plugin host. */
  owner: string;
  /** The skill's folder, for the scripts' paths. */
  dir?: string;
}

export interface AddSkillOptions {
  owner: string;
  dir?: string;
}

export class SkillLibrary {
  readonly #skills = new Map<string, LoadedSkill>();

  /**
   * Adds a skill and returns a function that removes exactly this entry. A name held by another
   * owner is refused (HA_ERR_PLUGIN_LOAD); the same owner replaces its entry, so a hot reload can
   * start the new instance before stopping the old one, whose remover then does nothing.
   */
  add(skill: ParsedSkill, options: AddSkillOptions): () => void {
    const taken = this.#skills.get(skill.name);
    if (taken && taken.owner !== options.owner) {
      throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `a skill named ${skill.name} is already loaded by ${taken.owner}`, {
        details: { name: skill.name, owner: options.owner, loaded_by: taken.owner },
      });
    }
    const entry: LoadedSkill = { skill, owner: options.owner };
    if (options.dir !== undefined) entry.dir = options.dir;
    this.#skills.set(skill.name, entry);
    return () => {
      if (this.#skills.get(skill.name) === entry) this.#skills.delete(skill.name);
    };
  }

  /** Removes the skill `name` (only if `owner` holds it, when given). */
  remove(name: string, owner?: string): boolean {
    const entry = this.#skills.get(name);
    if (!entry || (owner !== undefined && entry.owner !== owner)) return false;
    return this.#skills.delete(name);
  }

  get(name: string): LoadedSkill | undefined {
    return this.#skills.get(name);
  }

  /** Every skill, sorted by name. */
  list(): LoadedSkill[] {
    return [...this.#skills.values()].sort((a, b) => compare(a.skill.name, b.skill.name));
  }

  /**
   * The prompt block listing the skills, or undefined when there are none. Descriptions are
   * flattened to one line so a skill's text cannot open a block of its own in the prompt.
   */
  promptIndex(): string | undefined {
    const skills = this.list();
    if (skills.length === 0) return undefined;
    const lines = ['[Skills]', `Call ${SKILL_INFO_TOOL}(name) for the instructions before following a skill.`];
    for (const { skill } of skills.slice(0, PROMPT_INDEX_MAX_SKILLS)) {
      lines.push(`- ${skill.name}: ${oneLine(skill.description, PROMPT_INDEX_DESCRIPTION_CHARS)}`);
    }
    const more = skills.length - PROMPT_INDEX_MAX_SKILLS;
    if (more > 0) lines.push(`- ... and ${more} more: call ${SKILL_LIST_TOOL} to see them all.`);
    return lines.join('\n');
  }

  /** skill_list and skill_info, owned by {@link SKILLS_TOOL_OWNER}; they read the library live. */
  tools(): ToolDefinition[] {
    const skillList: ToolDefinition = {
      name: SKILL_LIST_TOOL,
      description: 'Lists the installed skills (step-by-step household routines) with their descriptions.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      owner: SKILLS_TOOL_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      execute: () => {
        const skills = this.list().map(({ skill }) => {
          const row: { name: string; description: string; version?: string } = { name: skill.name, description: skill.description };
          if (skill.version !== undefined) row.version = skill.version;
          return row;
        });
        return { count: skills.length, skills };
      },
    };
    const skillInfo: ToolDefinition = {
      name: SKILL_INFO_TOOL,
      description: "Returns a skill's full instructions (when to use it, steps, notes) and its scripts. Call it before following a skill.",
      parameters: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'The skill name, as skill_list shows it.' } },
        required: ['name'],
        additionalProperties: false,
      },
      owner: SKILLS_TOOL_OWNER,
      tier: 'read',
      parallel_safe: true,
      // Instructions are not household facts; keep them out of memory.
      no_memory: true,
      execute: (args) => this.#info(args.name),
    };
    return [skillList, skillInfo];
  }

  #info(requested: unknown): Record<string, unknown> {
    const name = typeof requested === 'string' ? requested : '';
    const entry = this.#skills.get(name) ?? this.#skills.get(name.trim().toLowerCase());
    if (!entry) {
      throw new ToolError({
        reason: 'not_found',
        field: 'name',
        detail: `no skill named ${JSON.stringify(name)} is installed`,
        hint: `call ${SKILL_LIST_TOOL} to see the installed skills`,
      });
    }
    const { skill } = entry;
    const info: Record<string, unknown> = { name: skill.name, description: skill.description };
    if (skill.version !== undefined) info.version = skill.version;
    if (skill.author !== undefined) info.author = skill.author;
    if (skill.metadata !== undefined) info.metadata = skill.metadata;
    if (skill.body.length > SKILL_INFO_BODY_CHARS) {
      // Sections repeat the body; for an oversized skill only the (cut) body is sent.
      info.instructions = skill.body.slice(0, SKILL_INFO_BODY_CHARS);
      info.truncated = `the instructions were cut at ${SKILL_INFO_BODY_CHARS} of ${skill.body.length} characters`;
    } else {
      info.instructions = skill.body;
      info.sections = skill.sections;
    }
    info.scripts = skill.scripts;
    if (skill.scripts.length > 0) {
      if (entry.dir !== undefined) info.scripts_dir = join(entry.dir, SKILL_SCRIPTS_DIR);
      info.scripts_note = SCRIPTS_NOTE;
    }
    return info;
  }
}

function oneLine(text: string, limit: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is removed
  const flat = text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= limit ? flat : `${chars.slice(0, limit - 1).join('')}…`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
