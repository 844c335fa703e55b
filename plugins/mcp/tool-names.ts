/**
 * Names of MCP tools in the registry: `mcp_<server>_<tool>`, reduced to what the registry accepts
 * (`[a-zA-Z0-9_-]`, at most 64 characters). Two tools can end up with one name (`get.weather` and
 * `get_weather`, server `a` tool `b_c` and server `a_b` tool `c`, or cut names sharing a long
 * prefix); the later ones get `_2`, `_3`, ... Within one server that order is the server's own
 * listing order, so its names stay the same from one listing to the next; between two servers
 * it is whichever connected first.
 */

export const MAX_TOOL_NAME = 64;
const NOT_ALLOWED = /[^a-zA-Z0-9_-]/g;

/** The name before any collision suffix. */
export function baseToolName(server: string, tool: string): string {
  return `mcp_${server}_${tool}`.replace(NOT_ALLOWED, '_').slice(0, MAX_TOOL_NAME);
}

/** The registry name candidates for one tool, best first: the base name, then `_2`, `_3`, ... (all at most 64 characters). */
export function* toolNameCandidates(server: string, tool: string, limit = 100): Generator<string> {
  const base = baseToolName(server, tool);
  yield base;
  for (let n = 2; n <= limit; n++) {
    const suffix = `_${n}`;
    yield `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
  }
}
