/** The real knowledge library for the kbtree tests (the knowledge tests' own fixture). */
import type { KnowledgeService } from '../../../../src/knowledge/knowledge-service.js';
import type { Teardown } from '../../fixtures/support.js';
import { openKnowledge } from '../../knowledge/fixtures/knowledge-fixture.js';

/** A started KnowledgeService on `dataDir` (or a stopped one, for "unavailable"). */
export async function startKnowledge(t: Teardown, dataDir: string, options: { start?: boolean } = {}): Promise<KnowledgeService> {
  const { kb } = await openKnowledge(t, { dataDir, ...(options.start === false ? { start: false } : {}) });
  return kb;
}
