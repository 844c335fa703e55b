/**
 * The knowledge library and the media store its attachments (and the camera's pictures) live in:
 * the knowledge service on memory's analyzer and embedder, the upkeep that removes pictures
 * nothing refers to, the knowledge tools (reading only the inbox) and control methods.
 */
import { join } from 'node:path';
import { registerKnowledgeMethods } from '../knowledge/knowledge-methods.js';
import { KnowledgeService } from '../knowledge/knowledge-service.js';
import { knowledgeTools } from '../knowledge/knowledge-tools.js';
import { MediaUpkeep } from '../knowledge/media-upkeep.js';
import type { MemoryService } from '../memory/memory-service.js';
import { MediaStore } from '../store/media-store.js';
import type { CoreParts } from './compose-core.js';
import type { ToolParts } from './compose-tools.js';

export interface KnowledgeParts {
  media: MediaStore;
  knowledge: KnowledgeService;
  mediaUpkeep: MediaUpkeep;
}

export function composeKnowledge(core: CoreParts, toolbox: ToolParts, memory: MemoryService): KnowledgeParts {
  const { store, settings, paths, logs, clock, control } = core;
  // The media store knowledge attachments live in; plugins (the camera) store pictures there too.
  const media = new MediaStore({
    dir: join(paths.dataDir, 'media'),
    maxBytes: () => settings.config().core.knowledge.max_media_mb * 1024 * 1024,
  });
  const knowledge = new KnowledgeService({
    database: () => store.database('knowledge'),
    dataDir: paths.dataDir,
    media,
    // Memory's analyzer and embedder (an installed model when configured); memory starts first.
    analyzer: () => memory.parts().analyzer,
    embedder: () => memory.parts().embedder,
    settings: () => settings.config().core.knowledge,
    clock,
    log: logs.child('knowledge'),
  });
  // Snapshots and other pictures nothing refers to are removed in time (core.knowledge.media_*).
  const mediaUpkeep = new MediaUpkeep({
    media,
    referenced: () => knowledge.referencedMedia(),
    settings: () => settings.config().core.knowledge,
    clock,
    log: logs.child('media'),
  });
  // Files handed over for knowledge_attach / knowledge_import_dir: the model reads nothing else.
  const inboxDir = join(paths.dataDir, 'inbox');
  for (const definition of knowledgeTools(knowledge, {
    settings: () => settings.config().core.knowledge,
    sourceRoots: () => [inboxDir],
  }))
    toolbox.tools.register(definition);
  registerKnowledgeMethods(control, knowledge, { logs, media });
  return { media, knowledge, mediaUpkeep };
}
