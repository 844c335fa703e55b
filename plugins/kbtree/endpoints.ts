/**
 * The kbtree endpoints: one table ({@link ENDPOINTS}) that the server routes by, the self-
 * description at `/` is made from, and the skill file (assets/skills/knowledge-base/SKILL.md) is
 * checked against. Query parameters are checked strictly, so a misspelt one is an error the calling
 * agent can read rather than a silently ignored filter.
 */
import { HomeAgentError, type PluginKnowledge } from '../../src/sdk/index.js';

export interface ParamSpec {
  name: string;
  type: 'string' | 'integer' | 'boolean';
  description: string;
  required?: boolean;
  default?: string | number | boolean;
  minimum?: number;
  maximum?: number;
}

export interface EndpointSpec {
  path: '/' | '/tree' | '/categories' | '/counts' | '/search';
  description: string;
  params: ParamSpec[];
}

export const SEARCH_LIMIT = { default: 10, minimum: 1, maximum: 100 } as const;
export const TREE_DEPTH_MAX = 16;
export const PREVIEW = { default: 120, minimum: 0, maximum: 1000 } as const;
/** Longest query text accepted; longer ones are not searches but pasted documents. */
export const MAX_QUERY_CHARS = 1000;
/** `token` may be on any URL (one of the three ways to send it). */
const ALWAYS_ALLOWED = new Set(['token']);

const CATEGORY: ParamSpec = {
  name: 'category',
  type: 'string',
  description:
    'A category path such as recipes or tech/go; its sub-categories are included. An unknown one is a 404 listing the top-level categories.',
};

export const ENDPOINTS: readonly EndpointSpec[] = [
  { path: '/', description: 'This description: the endpoints, their parameters and how to send the token.', params: [] },
  {
    path: '/tree',
    description:
      'The category tree with entry counts (item_count: directly in the category, total_count: with its sub-categories); with items, each entry with a preview.',
    params: [
      { ...CATEGORY, description: 'Start at this category (default: the whole library).' },
      {
        name: 'depth',
        type: 'integer',
        description: 'Levels below the start to expand (default: all).',
        minimum: 0,
        maximum: TREE_DEPTH_MAX,
      },
      {
        name: 'items',
        type: 'boolean',
        description: 'List the entries of each category with a preview (1/true or 0/false).',
        default: false,
      },
      {
        name: 'preview',
        type: 'integer',
        description: 'Characters of each entry preview when items are listed.',
        default: PREVIEW.default,
        minimum: PREVIEW.minimum,
        maximum: PREVIEW.maximum,
      },
    ],
  },
  { path: '/categories', description: 'Every category path, intermediate levels included, sorted.', params: [] },
  {
    path: '/counts',
    description: 'Entries per category (sub-categories included), most first; total is the number of entries.',
    params: [],
  },
  {
    path: '/search',
    description: 'Searches the entries by meaning and by words, best first, each with its score and a snippet.',
    params: [
      { name: 'q', type: 'string', description: `What to look for (1-${MAX_QUERY_CHARS} characters).`, required: true },
      CATEGORY,
      {
        name: 'limit',
        type: 'integer',
        description: 'Results at most.',
        default: SEARCH_LIMIT.default,
        minimum: SEARCH_LIMIT.minimum,
        maximum: SEARCH_LIMIT.maximum,
      },
    ],
  },
];

/** What `/` says about the service besides the endpoints. */
export interface ServiceInfo {
  name: string;
  version: string;
}

export interface EndpointResult {
  status: number;
  body: Record<string, unknown>;
}

/** Answers one authenticated GET; throws HomeAgentError (HA_ERR_RPC_INVALID_PARAMS for a bad parameter). */
export async function answer(
  endpoint: EndpointSpec,
  query: URLSearchParams,
  knowledge: PluginKnowledge,
  info: ServiceInfo,
): Promise<EndpointResult> {
  const params = readParams(endpoint, query);
  switch (endpoint.path) {
    case '/':
      return { status: 200, body: { ok: true, ...describe(info) } };
    case '/tree': {
      const category = await knownCategory(knowledge, params.category as string | undefined);
      if (typeof category !== 'string') return category;
      const tree = await knowledge.tree({
        ...(category === '' ? {} : { category }),
        ...(params.depth === undefined ? {} : { max_depth: params.depth as number }),
        include_items: params.items as boolean,
        preview_limit: params.preview as number,
      });
      return { status: 200, body: { ok: true, tree } };
    }
    case '/categories':
      return { status: 200, body: { ok: true, categories: await knowledge.categories() } };
    case '/counts': {
      const [counts, root] = await Promise.all([knowledge.categoryCounts(), knowledge.tree({ max_depth: 0 })]);
      return { status: 200, body: { ok: true, counts, total: root.total_count } };
    }
    case '/search': {
      const q = params.q as string;
      const category = await knownCategory(knowledge, params.category as string | undefined);
      if (typeof category !== 'string') return category;
      const limit = params.limit as number;
      const hits = await knowledge.search(q, { limit, ...(category === '' ? {} : { category }) });
      return { status: 200, body: { ok: true, query: q, category, limit, hits: hits.slice(0, limit) } };
    }
  }
}

export function describe(info: ServiceInfo): Record<string, unknown> {
  return {
    name: info.name,
    version: info.version,
    description: 'Read-only access to a household knowledge library: markdown entries in a category tree.',
    usage: 'Read /tree first to see which categories exist, then /search with q and a category; trust the top result most.',
    auth: {
      ways: ['X-API-Key: <token>', 'Authorization: Bearer <token>', '?token=<token>'],
      note: 'Every endpoint needs the token; the owner gets it with `homeagentctl kb token`.',
    },
    methods: ['GET'],
    endpoints: ENDPOINTS,
  };
}

type ParamValue = string | number | boolean | undefined;

function readParams(endpoint: EndpointSpec, query: URLSearchParams): Record<string, ParamValue> {
  const known = new Map(endpoint.params.map((p) => [p.name, p]));
  for (const name of new Set(query.keys())) {
    if (ALWAYS_ALLOWED.has(name)) continue;
    if (!known.has(name)) {
      const takes = endpoint.params.length === 0 ? 'takes no parameters' : `takes ${endpoint.params.map((p) => p.name).join(', ')}`;
      throw invalid(`unknown parameter ${JSON.stringify(name)}: ${endpoint.path} ${takes}`);
    }
    if (query.getAll(name).length > 1) throw invalid(`parameter ${name} is given more than once`);
  }
  const values: Record<string, ParamValue> = {};
  for (const spec of endpoint.params) {
    const text = query.get(spec.name);
    if (text === null || (text.trim() === '' && spec.type !== 'boolean')) {
      if (spec.required) throw invalid(`parameter ${spec.name} is required: ${spec.description}`);
      values[spec.name] = spec.default;
      continue;
    }
    values[spec.name] = parseParam(spec, text);
  }
  return values;
}

function parseParam(spec: ParamSpec, text: string): ParamValue {
  switch (spec.type) {
    case 'string': {
      if ([...text].length > MAX_QUERY_CHARS) throw invalid(`parameter ${spec.name} is longer than ${MAX_QUERY_CHARS} characters`);
      return text.trim();
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      // `?items` alone means yes.
      if (t === '' || t === '1' || t === 'true' || t === 'yes') return true;
      if (t === '0' || t === 'false' || t === 'no') return false;
      throw invalid(`parameter ${spec.name} must be 1/true or 0/false, not ${JSON.stringify(text)}`);
    }
    case 'integer': {
      const t = text.trim();
      const n = /^\d{1,9}$/.test(t) ? Number(t) : Number.NaN;
      const min = spec.minimum ?? 0;
      const max = spec.maximum ?? Number.MAX_SAFE_INTEGER;
      if (!Number.isInteger(n) || n < min || n > max) {
        throw invalid(`parameter ${spec.name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`);
      }
      return n;
    }
  }
}

function invalid(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', message);
}

/**
 * The category as the library spells it (`Recipes/Soup ` → `recipes/soup`, the way entry names are
 * sanitised), `''` for the whole library, or the 404 answer listing the top-level categories.
 */
async function knownCategory(knowledge: PluginKnowledge, raw: string | undefined): Promise<string | EndpointResult> {
  const category = normalizeCategory(raw ?? '');
  if (category === '') return '';
  const categories = await knowledge.categories();
  if (categories.includes(category)) return category;
  const topLevel = categories.filter((c) => !c.includes('/'));
  return {
    status: 404,
    body: {
      ok: false,
      error: {
        code: 'HA_ERR_KNOWLEDGE_NOT_FOUND',
        message: `no category ${JSON.stringify(category)}; top-level categories: ${topLevel.length > 0 ? topLevel.join(', ') : '(none yet)'}`,
      },
      categories: topLevel,
    },
  };
}

export function normalizeCategory(raw: string): string {
  return raw
    .trim()
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .map((segment) =>
      segment
        .trim()
        .normalize('NFC')
        .toLowerCase()
        .replace(/[\s\\]+/gu, '_'),
    )
    .join('/');
}
