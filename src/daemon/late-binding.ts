/**
 * A part the daemon composes later than a part that needs it: the two genuine cycles of the
 * composition (the change tracker reloads plugins, whose host needs the tool loop the tracker
 * wraps; memory submits upkeep inputs to the scheduler, whose agent recalls from memory). The
 * earlier part gets this binding instead of a closure over a variable declared further down, so
 * the cycle is visible where it is composed, and a use before binding is a coded error rather
 * than a TDZ ReferenceError.
 */
import { HomeAgentError } from '../shared/errors.js';

export class LateBinding<T> {
  readonly #what: string;
  #value: T | undefined;

  /** `what` names the part in the error, e.g. "the plugin host". */
  constructor(what: string) {
    this.#what = what;
  }

  bind(value: T): void {
    if (this.#value !== undefined) throw new HomeAgentError('HA_ERR_DAEMON_WIRING', `${this.#what} was bound twice`);
    this.#value = value;
  }

  get(): T {
    if (this.#value === undefined) throw new HomeAgentError('HA_ERR_DAEMON_WIRING', `${this.#what} was used before it was composed`);
    return this.#value;
  }
}
