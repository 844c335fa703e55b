/**
 * Skills as plugins: a skill folder loads, reloads, disables and shows up in `plugins list` like
 * any other plugin. A folder without plugin.json gets its manifest from the SKILL.md front matter;
 * the runtime's instance puts the parsed skill into the {@link SkillLibrary} on start and takes it
 * out on stop. Nothing of the skill runs: it is text the model reads through skill_info.
 */
import { join } from 'node:path';
import type { PluginInstance } from '../../sdk/plugin.js';
import { HomeAgentError } from '../../shared/errors.js';
import { checkManifest, type Manifest } from '../manifest.js';
import type { PluginRuntime } from '../runtime.js';
import type { SkillLibrary } from './skill-library.js';
import { parseSkill, SKILL_FILE } from './skill-parser.js';

/** The manifest's description limit (the skill's own may be up to 1024 characters). */
const MANIFEST_DESCRIPTION_CHARS = 500;

/**
 * The manifest of a skill folder that has no plugin.json: name, version (or 0.0.0), description
 * and author from the front matter (or skill.json), any engine, kind `skill`, entry SKILL.md.
 * Throws HA_ERR_SKILL_INVALID when the skill cannot be used.
 */
export function skillManifest(dir: string): Manifest {
  const skill = parseSkill(dir);
  const chars = [...skill.description];
  const manifest: Manifest = {
    name: skill.name,
    version: skill.version ?? '0.0.0',
    description:
      chars.length <= MANIFEST_DESCRIPTION_CHARS ? skill.description : `${chars.slice(0, MANIFEST_DESCRIPTION_CHARS - 1).join('')}…`,
    engine: '*',
    kind: 'skill',
    entry: SKILL_FILE,
  };
  if (skill.author !== undefined) manifest.author = skill.author;
  return checkManifest(manifest, join(dir, SKILL_FILE));
}

/** The runtime for `kind: 'skill'`: each instance loads its folder's skill into `library`. */
export function createSkillRuntime(library: SkillLibrary): PluginRuntime {
  return ({ manifest, dir, log }): PluginInstance => {
    const owner = `plugin:${manifest.name}`;
    let remove: (() => void) | undefined;
    let loaded: string | undefined;
    return {
      async start() {
        const skill = parseSkill(dir, { file: manifest.entry });
        if (skill.name !== manifest.name) {
          // Enabling, disabling and reloading go by the plugin name; two names for one thing would mislead.
          throw new HomeAgentError(
            'HA_ERR_SKILL_INVALID',
            `${join(dir, manifest.entry)}: the skill is named "${skill.name}" but its plugin.json says "${manifest.name}"; use one name`,
          );
        }
        for (const warning of skill.warnings) log.warn({ skill: skill.name }, `skill ${skill.name}: ${warning}`);
        remove = library.add(skill, { owner, dir });
        loaded = skill.name;
      },
      async stop() {
        remove?.();
        remove = undefined;
        loaded = undefined;
      },
      health() {
        if (loaded !== undefined && library.get(loaded)?.owner === owner) {
          return { ok: true, detail: `skill ${loaded} is loaded`, detail_zh: `技能 ${loaded} 已加载` };
        }
        return { ok: false, detail: 'the skill is not loaded', detail_zh: '技能没有加载' };
      },
    };
  };
}
