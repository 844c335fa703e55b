/**
 * How the local intent engine's sentences are declared (issue 11): per intent and language, the
 * templates of src/intent/template-grammar.ts and the slots a match of them implies. The lists the
 * templates name are built from the entity registry (names, areas, floors) and from fixed
 * vocabularies (domains, device classes, colours, numbers, durations) by the recogniser.
 *
 * List names every sentence file may use (the recogniser supplies them for each language):
 *   {name}          an entity's name or alias → the entity's name as registered
 *   {area}          an area's name or alias → the area's name
 *   {floor}         a floor's name → the floor's name
 *   {brightness}    0–100, with percent words ("50%", "百分之五十", "half")
 *   {position}      0–100, with percent words
 *   {temperature}   a number, with degree words
 *   {volume}        0–100, with percent words
 *   {color}         a colour word → its English name ("red", "红色" → red)
 *   {duration}      a duration → seconds (timers)
 *   {item}          any text (shopping and to-do items), {list_name} a to-do list's name
 *   {timer_name}    any text, {search_query} any text, {message} any text
 * Fixed slots (domain, device_class, state, …) are given in `slots`, never matched.
 */
import type { SlotValue } from './template-grammar.js';

export type IntentLanguage = 'en' | 'zh';

export interface IntentSentences {
  /** The intent name as Home Assistant's test data spells it (HassTurnOn, HassStartTimer, ...). */
  intent: string;
  language: IntentLanguage;
  templates: readonly string[];
  /** Slots every match of these templates carries (e.g. { domain: 'light' } for "turn on the lights"). */
  slots?: Readonly<Record<string, SlotValue>>;
}
