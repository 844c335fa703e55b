/**
 * The memory graph view: a picture of what the house knows around one entity. Search picks the
 * centre; the server answers a bounded neighbourhood (memory.graph: a few hops, at most a couple
 * of hundred entities, strongest relations first), never the whole graph, so the view stays quick
 * with tens of thousands of entities. Filters narrow it by entity type, relation, when a fact was
 * said, what was true on a day, and whether ended facts show. Opening a node shows its facts and,
 * for each, the sentences it was read from and the original input behind them; "centre here"
 * walks on from it. Drawn in SVG by graph-layout.ts.
 */
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { layoutGraph } from '../graph-layout';
import { dateTime, formatNumber, t } from '../i18n';
import { href, navigate } from '../router';
import type { EntityListResult, EntityRelationView, EntityView, GraphNeighbourhoodResult, GraphTypesResult, GraphViewNode } from '../types';
import { ErrorLine, Show, useLoad } from '../ui';
import { EventText } from './memory';

const WIDTH = 800;
const HEIGHT = 560;
const DAY = 86_400_000;
const SAID = { any: 0, day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY } as const;
type Said = keyof typeof SAID;
const NODE_CAPS = [30, 60, 120, 200] as const;
/** Colours by entity type (hashed), readable on the light and the dark theme. */
const PALETTE = ['#2a6df4', '#1a7f37', '#b35900', '#8250df', '#c62828', '#0a7e8c', '#9a6700', '#6e7781'];

interface Filters {
  depth: number;
  maxNodes: number;
  entityType: string | null;
  relationType: string | null;
  said: Said;
  /** A day (yyyy-mm-dd) the facts were true on, or ''. */
  trueOn: string;
  history: boolean;
}

const INITIAL: Filters = { depth: 2, maxNodes: 60, entityType: null, relationType: null, said: 'any', trueOn: '', history: false };

function colour(type: string): string {
  let h = 0;
  for (const c of type) h = (h * 31 + (c.codePointAt(0) ?? 0)) >>> 0;
  return type === '' ? '#6e7781' : (PALETTE[h % PALETTE.length] ?? '#6e7781');
}

export function GraphView({ centre }: { centre: string }) {
  const [filters, setFilters] = useState<Filters>(INITIAL);
  const change = (update: Partial<Filters>) => setFilters((old) => ({ ...old, ...update }));
  return (
    <section class="graph split">
      <aside class="card">
        <EntitySearch selected={centre} />
        <FilterForm filters={filters} onChange={change} />
      </aside>
      <div class="main-col">
        {centre === '' ? (
          <div class="card">
            <p class="muted" data-testid="graph-hint">
              {t('graph.pick')}
            </p>
          </div>
        ) : (
          <Neighbourhood key={centre} centre={centre} filters={filters} />
        )}
      </div>
    </section>
  );
}

function EntitySearch({ selected }: { selected: string }) {
  const [text, setText] = useState('');
  const q = text.trim();
  const list = useLoad((signal) => api.get<EntityListResult>('/memory/entities', { q, limit: 10 }, signal), [q]);
  return (
    <>
      <h2>{t('graph.search')}</h2>
      <input
        type="search"
        value={text}
        placeholder={t('graph.search_placeholder')}
        aria-label={t('graph.search')}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      {q === '' && <p class="muted small">{t('graph.suggested')}</p>}
      <Show loaded={list}>
        {(data) =>
          data.entities.length === 0 ? (
            <p class="muted">{q === '' ? t('mem.no_entities') : t('graph.no_match')}</p>
          ) : (
            <ul class="entity-list" data-testid="graph-matches">
              {data.entities.map((e) => (
                <li key={e.name} class={e.name === selected ? 'selected' : ''}>
                  <button type="button" class="link" onClick={() => navigate('graph', e.name)}>
                    {e.name}
                  </button>{' '}
                  <span class="muted small">{[e.type, t('mem.relations', { count: e.relation_count })].filter(Boolean).join(' · ')}</span>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </>
  );
}

function FilterForm({ filters, onChange }: { filters: Filters; onChange: (update: Partial<Filters>) => void }) {
  const types = useLoad((signal) => api.get<GraphTypesResult>('/memory/graph/types', {}, signal), []);
  const entityTypes = types.data?.entity_types ?? [];
  const relationTypes = types.data?.relation_types ?? [];
  return (
    <form class="graph-filters" onSubmit={(e) => e.preventDefault()}>
      <h3>{t('graph.filters')}</h3>
      <label>
        {t('graph.depth')}
        <select value={String(filters.depth)} onChange={(e) => onChange({ depth: Number(e.currentTarget.value) })}>
          {[1, 2, 3, 4].map((d) => (
            <option key={d} value={String(d)}>
              {formatNumber(d)}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('graph.max_nodes')}
        <select value={String(filters.maxNodes)} onChange={(e) => onChange({ maxNodes: Number(e.currentTarget.value) })}>
          {NODE_CAPS.map((n) => (
            <option key={n} value={String(n)}>
              {t('graph.nodes_option', { count: n })}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('graph.entity_type')}
        <select
          value={filters.entityType ?? '*'}
          onChange={(e) => onChange({ entityType: e.currentTarget.value === '*' ? null : e.currentTarget.value })}
        >
          <option value="*">{t('graph.all')}</option>
          {entityTypes.map((e) => (
            <option key={e.type} value={e.type}>
              {`${e.type === '' ? t('graph.untyped') : e.type} (${formatNumber(e.count)})`}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('graph.relation_type')}
        <select
          value={filters.relationType ?? '*'}
          onChange={(e) => onChange({ relationType: e.currentTarget.value === '*' ? null : e.currentTarget.value })}
        >
          <option value="*">{t('graph.all')}</option>
          {relationTypes.map((r) => (
            <option key={r.type} value={r.type}>
              {`${r.type} (${formatNumber(r.count)})`}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('graph.said')}
        <select value={filters.said} onChange={(e) => onChange({ said: e.currentTarget.value as Said })}>
          {(Object.keys(SAID) as Said[]).map((s) => (
            <option key={s} value={s}>
              {t(`graph.said.${s}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('graph.true_on')}
        <input type="date" value={filters.trueOn} onInput={(e) => onChange({ trueOn: e.currentTarget.value })} />
      </label>
      <label class="check">
        <input type="checkbox" checked={filters.history} onChange={(e) => onChange({ history: e.currentTarget.checked })} />
        {t('graph.history')}
      </label>
      <ErrorLine error={types.error} />
    </form>
  );
}

/** The query memory.graph gets for these filters (GET /memory/graph). */
function graphQuery(centre: string, f: Filters): Record<string, string | number | boolean | undefined> {
  return {
    entity: centre,
    depth: f.depth,
    max_nodes: f.maxNodes,
    // ',' alone asks for the untyped (see the route).
    entity_types: f.entityType === null ? undefined : f.entityType === '' ? ',' : f.entityType,
    relation_types: f.relationType ?? undefined,
    since: f.said === 'any' ? undefined : new Date(Date.now() - SAID[f.said]).toISOString(),
    // The end of that day in the browser's time zone: what was true on it.
    at: f.trueOn === '' ? undefined : new Date(`${f.trueOn}T23:59:59`).toISOString(),
    history: f.history || undefined,
  };
}

function Neighbourhood({ centre, filters }: { centre: string; filters: Filters }) {
  // Made once per change of the filters: `since` is counted back from the moment they were chosen.
  const query = useMemo(() => graphQuery(centre, filters), [centre, filters]);
  const answer = useLoad((signal) => api.get<GraphNeighbourhoodResult>('/memory/graph', query, signal), [JSON.stringify(query)]);
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <>
      <div class="card" data-testid="graph-card">
        <Show loaded={answer}>{(data) => <GraphPicture data={data} selected={open ?? data.center.name} onSelect={setOpen} />}</Show>
      </div>
      {answer.data && <NodeFacts key={open ?? answer.data.center.name} name={open ?? answer.data.center.name} centre={centre} />}
    </>
  );
}

function GraphPicture({
  data,
  selected,
  onSelect,
}: {
  data: GraphNeighbourhoodResult;
  selected: string;
  onSelect: (name: string) => void;
}) {
  const positions = useMemo(
    () => layoutGraph(data.nodes, data.edges, data.center.id, { width: WIDTH, height: HEIGHT, margin: data.nodes.length > 60 ? 30 : 50 }),
    [data],
  );
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  const labelled = data.nodes.length <= 80;
  const edgeLabels = data.edges.length <= 30;
  return (
    <>
      <div class="panel-head">
        <h2>{data.center.name}</h2>
        <span class="muted small" data-testid="graph-summary">
          {t('graph.count_nodes', { count: data.nodes.length })} · {t('graph.count_edges', { count: data.edges.length })}
        </span>
      </div>
      {(data.truncated.nodes || data.truncated.edges) && (
        <p class="muted small" data-testid="graph-truncated">
          {t('graph.truncated', { count: data.nodes.length })}
        </p>
      )}
      {data.edges.length === 0 && <p class="muted">{t('graph.empty')}</p>}
      <svg
        class="graph-svg"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={t('graph.label', { name: data.center.name })}
        data-testid="graph-svg"
      >
        <g class="edges">
          {data.edges.map((e) => {
            const a = positions.get(e.source);
            const b = positions.get(e.target);
            if (!a || !b) return null;
            const title = `${byId.get(e.source)?.name ?? ''} ${e.type} ${byId.get(e.target)?.name ?? ''}${e.sentence ? ` — “${e.sentence}”` : ''}`;
            return (
              <g key={e.id} class={e.valid_to === null ? 'edge' : 'edge ended'} data-relation={e.id}>
                <line x1={a.x} y1={a.y} x2={b.x} y2={b.y} />
                {edgeLabels && (
                  <text x={(a.x + b.x) / 2} y={(a.y + b.y) / 2 - 3} class="edge-label">
                    {e.type}
                  </text>
                )}
                <title>{title}</title>
              </g>
            );
          })}
        </g>
        <g class="nodes">
          {data.nodes.map((n) => {
            const p = positions.get(n.id);
            if (!p) return null;
            return (
              <GraphNode
                key={n.id}
                node={n}
                x={p.x}
                y={p.y}
                centre={n.id === data.center.id}
                selected={n.name === selected}
                labelled={labelled || n.id === data.center.id || n.name === selected}
                onSelect={onSelect}
              />
            );
          })}
        </g>
      </svg>
      <ul class="graph-legend">
        {[...new Set(data.nodes.map((n) => n.type))].map((type) => (
          <li key={type}>
            <span class="swatch" style={{ background: colour(type) }} />
            {type === '' ? t('graph.untyped') : type}
          </li>
        ))}
      </ul>
    </>
  );
}

function GraphNode(props: {
  node: GraphViewNode;
  x: number;
  y: number;
  centre: boolean;
  selected: boolean;
  labelled: boolean;
  onSelect: (name: string) => void;
}) {
  const { node: n, x, y } = props;
  const r = Math.min(16, 6 + Math.log2(1 + n.mention_count) * 2) + (props.centre ? 3 : 0);
  const hidden = n.hidden_relations > 0 ? t('graph.hidden', { count: n.hidden_relations, more: n.relation_count_capped ? '+' : '' }) : '';
  const label = n.name.length > 18 ? `${n.name.slice(0, 17)}…` : n.name;
  return (
    // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>; it takes the role, focus and keys of one
    <g
      class={`node${props.centre ? ' centre' : ''}${props.selected ? ' selected' : ''}`}
      transform={`translate(${x.toFixed(1)} ${y.toFixed(1)})`}
      role="button"
      tabIndex={0}
      aria-label={n.name}
      aria-pressed={props.selected}
      data-entity={n.name}
      onClick={() => props.onSelect(n.name)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          props.onSelect(n.name);
        }
      }}
    >
      <circle r={r} fill={colour(n.type)} />
      {n.hidden_relations > 0 && (
        <text class="more" x={r + 2} y={-r + 2}>
          +{n.hidden_relations > 99 ? '99' : n.hidden_relations}
        </text>
      )}
      {props.labelled && (
        <text class="label" y={r + 13}>
          {label}
        </text>
      )}
      <title>{[n.name, n.type, hidden].filter(Boolean).join(' · ')}</title>
    </g>
  );
}

/** One entity's facts, each with the sentences it came from and the input behind them. */
function NodeFacts({ name, centre }: { name: string; centre: string }) {
  const view = useLoad((signal) => api.get<EntityView>(`/memory/entities/${encodeURIComponent(name)}`, {}, signal), [name]);
  return (
    <div class="card" data-testid="graph-node">
      <Show loaded={view}>
        {(data) => (
          <>
            <div class="panel-head">
              <h2>
                {data.entity.name} {data.entity.type && <span class="badge">{data.entity.type}</span>}
              </h2>
              <span class="buttons">
                {data.entity.name !== centre && (
                  <button type="button" onClick={() => navigate('graph', data.entity.name)}>
                    {t('graph.centre')}
                  </button>
                )}
                <a href={href('memory', data.entity.name)}>{t('graph.inspect')}</a>
              </span>
            </div>
            <p class="muted small">
              {data.entity.aliases.length > 0 && `${t('mem.aliases', { names: data.entity.aliases.join(', ') })} · `}
              {t('mem.mentions', { count: data.entity.mention_count })} · {dateTime(data.entity.updated_at)}
            </p>
            <h3>{t('mem.facts')}</h3>
            {data.current.length === 0 ? (
              <p class="muted">{t('mem.no_facts')}</p>
            ) : (
              <ul class="facts">
                {data.current.map((r) => (
                  <NodeFact key={r.id} relation={r} />
                ))}
              </ul>
            )}
            {data.history.length > 0 && (
              <details>
                <summary>
                  {t('mem.superseded')} ({data.history.length})
                </summary>
                <ul class="facts old">
                  {data.history.map((r) => (
                    <NodeFact key={r.id} relation={r} />
                  ))}
                </ul>
              </details>
            )}
          </>
        )}
      </Show>
    </div>
  );
}

function NodeFact({ relation: r }: { relation: EntityRelationView }) {
  const [event, setEvent] = useState<string | undefined>(undefined);
  return (
    <li class="fact" data-relation={r.id}>
      <div class="fact-line">
        <span>
          {r.subject} <strong>{r.relation}</strong> {r.object}
        </span>
      </div>
      <div class="muted small">
        {t('mem.confidence', { value: formatNumber(r.confidence) })} · {dateTime(r.valid_from)}
        {r.valid_to && ` – ${dateTime(r.valid_to)}`}
      </div>
      {r.provenance.length > 0 && (
        <ul class="plain provenance-list">
          {r.provenance.map((p) => (
            <li key={p.sentence_id}>
              <span class="sentence">“{p.text}”</span>
              {p.source_event_id !== '' && (
                <button
                  type="button"
                  class="link small"
                  aria-pressed={event === p.source_event_id}
                  onClick={() => setEvent(event === p.source_event_id ? undefined : p.source_event_id)}
                >
                  {t('mem.original')}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {event !== undefined && <EventText id={event} testid="graph-event" />}
    </li>
  );
}
