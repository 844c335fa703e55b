/**
 * The memory layer's tools for the model (owner `memory`): recall with provenance and abstention,
 * graph corrections, documents and people. Tools whose result only repeats memory (recall,
 * introspection, doc_query, person lookups) are `no_memory`, so memory is not written back into
 * itself. Purge and entity deletion are `dangerous`: they destroy history and need confirmation.
 */
import type { ToolDefinition } from '../shared/tool.js';
import { type DocumentToolDeps, documentTools } from './memory-document-tools.js';
import { graphTools } from './memory-graph-tools.js';
import { personTools } from './memory-person-tools.js';

export { DOC_QUERY_MIN_COSINE } from './memory-document-tools.js';
export { MEMORY_OWNER, type MemoryToolDeps, NO_RECORD_SENTENCE } from './memory-graph-tools.js';

/** Every memory tool; `deps.embedder` (optional) lets doc_query search by vector too. */
export function memoryTools(deps: DocumentToolDeps): ToolDefinition[] {
  return [...graphTools(deps), ...documentTools(deps), ...personTools(deps)];
}
