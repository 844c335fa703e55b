/**
 * The recogniser kept in step with the entity registry. Compiling every template against the
 * home's names takes a few hundred milliseconds with 200 entities, and plugins register their
 * entities one by one at start, so a change only marks the compilation stale and schedules one
 * recompile after a quiet spell; a command arriving before then compiles at once, so a device
 * registered a moment ago is already understood. State changes never recompile: only names,
 * aliases, areas, domains and device classes are in the grammar, and an unchanged set of those
 * (a plugin reloading its devices) is recognised and skipped.
 */
import type { Area, EntityInfo } from '../home/types.js';
import type { IntentSentences } from './intent-sentences.js';
import type { IntentHome, IntentRecognizer } from './recognizer.js';
import { IntentUnderstander } from './understander.js';

export interface LiveRecognizerOptions {
  sentences: readonly IntentSentences[];
  entities: () => readonly EntityInfo[];
  areas: () => readonly Area[];
  /** Quiet time after the last registry change before recompiling in the background. */
  delayMs: () => number;
  /** How long a conversation's last target is remembered for follow-ups (seconds). */
  followupQuietS?: () => number;
}

export class LiveRecognizer {
  readonly #o: LiveRecognizerOptions;
  #understander: IntentUnderstander | undefined;
  #key = '';
  #stale = true;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LiveRecognizerOptions) {
    this.#o = options;
  }

  /** The registry changed (an entity registered or removed): recompile soon. */
  changed(): void {
    this.#stale = true;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.current(), this.#o.delayMs());
    this.#timer.unref();
  }

  /** The template recogniser for the home as it is now. */
  current(): IntentRecognizer {
    return this.understander().recognizer;
  }

  /** The whole engine (templates, composition, conversations) for the home as it is now. */
  understander(): IntentUnderstander {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#stale || this.#understander === undefined) {
      this.#stale = false;
      const home = homeOf(this.#o.entities(), this.#o.areas());
      const key = JSON.stringify(home);
      if (this.#understander === undefined) {
        const quiet = this.#o.followupQuietS;
        this.#understander = new IntentUnderstander(this.#o.sentences, home, quiet ? { followupQuietS: quiet() } : {});
      } else if (key !== this.#key) this.#understander.setHome(home);
      this.#key = key;
    }
    return this.#understander;
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** The registry's entities and areas in the recogniser's terms (areas by name, not id). */
export function homeOf(entities: readonly EntityInfo[], areas: readonly Area[]): IntentHome {
  const areaName = new Map(areas.map((area) => [area.id, area.name]));
  const floors = [...new Set(areas.flatMap((area) => (area.floor === undefined ? [] : [area.floor])))];
  return {
    areas: areas.map((area) => ({ name: area.name, aliases: area.aliases, ...(area.floor !== undefined && { floor: area.floor }) })),
    floors: floors.map((name) => ({ name })),
    entities: entities.map((entity) => {
      const area = entity.area === null ? undefined : areaName.get(entity.area);
      return {
        name: entity.name,
        aliases: entity.aliases,
        domain: entity.domain,
        ...(area !== undefined && { area }),
        ...(entity.device_class !== null && { device_class: entity.device_class }),
        ...colourModes(entity.attributes),
      };
    }),
  };
}

/** A light's supported colour modes (Home Assistant's attribute), so a plain relay is not offered a brightness. */
function colourModes(attributes: Readonly<Record<string, unknown>> | undefined): { color_modes?: string[] } {
  const modes = attributes?.supported_color_modes;
  return Array.isArray(modes) && modes.every((m) => typeof m === 'string') ? { color_modes: modes as string[] } : {};
}
