/**
 * The local intent engine's English sentence knowledge for plugins (issue 30): its templates and
 * colour words, from which the voice plugin builds the grammar of its offline command recogniser,
 * so the recogniser can hear exactly what the intent engine understands. A file of its own, not in
 * the SDK index: only the voice plugin loads the sentence files through it.
 */
export type { IntentSentences } from '../intent/intent-sentences.js';
export { COLOURS as INTENT_COLOURS } from '../intent/recognizer.js';
export { ALL_SENTENCES as INTENT_SENTENCES } from '../intent/sentences/index.js';
