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
import { type IntentHome, IntentRecognizer } from './recognizer.js';

export interface LiveRecognizerOptions {
  sentences: readonly IntentSentences[];
  entities: () => readonly EntityInfo[];
  areas: () => readonly Area[];
  /** Quiet time after the last registry change before recompiling in the background. */
  delayMs: () => number;
}

export class LiveRecognizer {
  readonly #o: LiveRecognizerOptions;
  #recognizer: IntentRecognizer | undefined;
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

  /** The recogniser for the home as it is now. */
  current(): IntentRecognizer {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#stale || this.#recognizer === undefined) {
      this.#stale = false;
      const home = homeOf(this.#o.entities(), this.#o.areas());
      const key = JSON.stringify(home);
      if (this.#recognizer === undefined) this.#recognizer = new IntentRecognizer(this.#o.sentences, home);
      else if (key !== this.#key) this.#recognizer.setHome(home);
      this.#key = key;
    }
    return this.#recognizer;
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
      };
    }),
  };
}
