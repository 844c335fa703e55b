// The kernel's layers (DESIGN.md): src/<folder> → its layer. Imports only point down or sideways.
// scripts/check-boundaries.mjs enforces them; scripts/check-docs.mjs checks that the README's
// layout states them.
export const LAYERS = {
  shared: 0,
  // The wire types (type declarations and plain data only; the web page imports them through src/sdk/api.ts).
  api: 0,
  config: 1,
  log: 1,
  events: 1,
  store: 1,
  nlp: 2,
  embed: 2,
  lua: 2,
  llm: 2,
  memory: 2,
  knowledge: 2,
  home: 2,
  lists: 2,
  tracker: 2,
  io: 3,
  agent: 3,
  intent: 3,
  automation: 3,
  sdk: 3,
  plugin: 4,
  supervisor: 4,
  cli: 4,
  // The evaluation harnesses (memory, intent, knowledge): measure those rooms; run by src/main.ts and bench/.
  eval: 4,
  // The composition: src/daemon.ts and the per-area modules of src/daemon/ (only main.ts imports them).
  daemon: 5,
};
