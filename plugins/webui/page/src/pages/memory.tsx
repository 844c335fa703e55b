/**
 * The memory inspector: what memory recalls for a text, the entities it knows, one entity's
 * neighbourhood (its current facts and the ones they superseded), and for each fact where it came
 * from — the sentences and the original inputs (events) that said it. A wrong fact is corrected
 * (memory.edit replaces it, keeping its evidence) or deleted.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { dateTime, formatNumber, t } from '../i18n';
import { navigate } from '../router';
import type { EntityListResult, EntityRelationView, EntityView, EventView, MemorySearchResult } from '../types';
import { ActionButton, ErrorLine, Show, useLoad, useSubmit } from '../ui';

export function MemoryView({ entity }: { entity: string }) {
  return (
    <section class="memory split">
      <aside class="card">
        <EntityList selected={entity} />
      </aside>
      <div class="main-col">
        <Recall />
        {entity !== '' && <EntityDetail key={entity} name={entity} />}
      </div>
    </section>
  );
}

function Recall() {
  const [text, setText] = useState('');
  const [result, setResult] = useState<MemorySearchResult | undefined>(undefined);
  const submit = useSubmit(async () => {
    setResult(await api.get<MemorySearchResult>('/memory/search', { q: text.trim(), limit: 10 }));
  });
  return (
    <div class="card">
      <form class="row" onSubmit={submit.onSubmit}>
        <input
          type="search"
          value={text}
          required
          placeholder={t('mem.search_placeholder')}
          aria-label={t('mem.search_placeholder')}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit" disabled={submit.busy || text.trim() === ''}>
          {t('mem.recall')}
        </button>
      </form>
      <ErrorLine error={submit.error} />
      {result &&
        (result.abstain || result.items.length === 0 ? (
          <p class="muted">{t('mem.abstain')}</p>
        ) : (
          <ul class="hits">
            {result.items.map((item, i) => (
              <li key={`${i}-${item.text}`}>
                <span class="badge">{item.kind}</span> {item.line ?? item.text}
                {item.facts && item.facts.length > 0 && <div class="small">{item.facts.join(' · ')}</div>}
                <div class="muted small">
                  {formatNumber(item.score)} · {dateTime(item.at)}
                  {item.superseded && ` · ${t('mem.superseded')}`}
                </div>
                {item.sources.length > 0 && <Sources ids={item.sources} />}
              </li>
            ))}
          </ul>
        ))}
    </div>
  );
}

const PAGE = 50;

function EntityList({ selected }: { selected: string }) {
  const [filter, setFilter] = useState('');
  const [limit, setLimit] = useState(PAGE);
  const list = useLoad((signal) => api.get<EntityListResult>('/memory/entities', { q: filter.trim(), limit }, signal), [filter, limit]);
  return (
    <>
      <h2>{t('mem.entities')}</h2>
      <input
        type="search"
        value={filter}
        placeholder={t('mem.filter')}
        aria-label={t('mem.filter')}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      <Show loaded={list}>
        {(data) =>
          data.entities.length === 0 ? (
            <p class="muted">{t('mem.no_entities')}</p>
          ) : (
            <>
              <ul class="entity-list">
                {data.entities.map((e) => (
                  <li key={e.name} class={e.name === selected ? 'selected' : ''}>
                    <button type="button" class="link" onClick={() => navigate('memory', e.name)}>
                      {e.name}
                    </button>{' '}
                    <span class="muted small">{[e.type, t('mem.relations', { count: e.relation_count })].filter(Boolean).join(' · ')}</span>
                  </li>
                ))}
              </ul>
              {data.total > data.entities.length && (
                <button type="button" onClick={() => setLimit(limit + PAGE)}>
                  {t('mem.more')}
                </button>
              )}
            </>
          )
        }
      </Show>
    </>
  );
}

function EntityDetail({ name }: { name: string }) {
  const view = useLoad((signal) => api.get<EntityView>(`/memory/entities/${encodeURIComponent(name)}`, {}, signal), [name]);
  return (
    <div class="card" data-testid="memory-entity">
      <Show loaded={view}>
        {(data) => (
          <>
            <div class="panel-head">
              <h2>
                {data.entity.name} {data.entity.type && <span class="badge">{data.entity.type}</span>}
              </h2>
              <ActionButton
                class="danger"
                confirm={t('common.confirm_delete', { name: data.entity.name })}
                action={async () => {
                  await api.del(`/memory/entities/${encodeURIComponent(data.entity.name)}`);
                  view.reload();
                }}
              >
                {t('common.delete')}
              </ActionButton>
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
                  <Fact key={r.id} relation={r} onChanged={view.reload} />
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
                    <Fact key={r.id} relation={r} />
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

function Fact({ relation: r, onChanged }: { relation: EntityRelationView; onChanged?: () => void }) {
  const [editing, setEditing] = useState(false);
  return (
    <li class="fact" data-relation={r.id}>
      {editing && onChanged ? (
        <EditFact
          relation={r}
          onDone={() => {
            setEditing(false);
            onChanged();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <div class="fact-line">
          <span>
            <FactEntity name={r.subject} /> <strong>{r.relation}</strong> <FactEntity name={r.object} />
          </span>
          {onChanged && (
            <span class="buttons">
              <button type="button" onClick={() => setEditing(true)}>
                {t('common.edit')}
              </button>
              <ActionButton
                class="danger"
                confirm={t('common.confirm_delete', { name: `${r.subject} ${r.relation} ${r.object}` })}
                action={async () => {
                  await api.del(`/memory/relations/${r.id}`);
                  onChanged();
                }}
              >
                {t('common.delete')}
              </ActionButton>
            </span>
          )}
        </div>
      )}
      <div class="muted small">
        {t('mem.confidence', { value: formatNumber(r.confidence) })} · {dateTime(r.valid_from)}
        {r.valid_to && ` – ${dateTime(r.valid_to)}`}
      </div>
      {r.provenance.length > 0 && (
        <details class="provenance">
          <summary>
            {t('mem.provenance')} ({r.evidence_count})
          </summary>
          <ul class="plain">
            {r.provenance.map((p) => (
              <li key={p.sentence_id}>
                “{p.text}”
                <Sources ids={[p.source_event_id]} />
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

function FactEntity({ name }: { name: string }) {
  return (
    <button type="button" class="link" onClick={() => navigate('memory', name)}>
      {name}
    </button>
  );
}

function EditFact({ relation, onDone, onCancel }: { relation: EntityRelationView; onDone: () => void; onCancel: () => void }) {
  const [subject, setSubject] = useState(relation.subject);
  const [type, setType] = useState(relation.relation);
  const [object, setObject] = useState(relation.object);
  const submit = useSubmit(async () => {
    const body: Record<string, string> = {};
    if (subject.trim() !== relation.subject) body.subject = subject.trim();
    if (type.trim() !== relation.relation) body.relation = type.trim();
    if (object.trim() !== relation.object) body.object = object.trim();
    if (Object.keys(body).length === 0) return onCancel();
    await api.patch(`/memory/relations/${relation.id}`, body);
    onDone();
  });
  return (
    <form class="edit-fact" onSubmit={submit.onSubmit}>
      <input
        value={subject}
        required
        aria-label={t('mem.subject')}
        placeholder={t('mem.subject')}
        onInput={(e) => setSubject(e.currentTarget.value)}
      />
      <input
        value={type}
        required
        aria-label={t('mem.relation')}
        placeholder={t('mem.relation')}
        onInput={(e) => setType(e.currentTarget.value)}
      />
      <input
        value={object}
        required
        aria-label={t('mem.object')}
        placeholder={t('mem.object')}
        onInput={(e) => setObject(e.currentTarget.value)}
      />
      <span class="buttons">
        <button type="submit" class="primary" disabled={submit.busy}>
          {t('common.save')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </span>
      <ErrorLine error={submit.error} />
    </form>
  );
}

/** Source event ids; a click shows the original input the fact came from. */
function Sources({ ids: all }: { ids: string[] }) {
  const [open, setOpen] = useState<string | undefined>(undefined);
  // A fact stored without an input behind it (a maintenance job, an import) has no event to show.
  const ids = [...new Set(all.filter((id) => id !== ''))];
  if (ids.length === 0) return null;
  return (
    <div class="sources">
      <span class="muted small">{t('mem.sources')}:</span>
      {ids.map((id) => (
        <button key={id} type="button" class="link small" aria-pressed={open === id} onClick={() => setOpen(open === id ? undefined : id)}>
          {id}
        </button>
      ))}
      {open !== undefined && <EventText id={open} />}
    </div>
  );
}

/** The original input behind a fact (the words, when and where they were said); the graph view shows it too. */
export function EventText({ id, testid = 'memory-event' }: { id: string; testid?: string }) {
  const event = useLoad((signal) => api.get<EventView>(`/memory/events/${encodeURIComponent(id)}`, {}, signal), [id]);
  return (
    <blockquote class="event" data-testid={testid}>
      <Show loaded={event}>
        {(e) => (
          <>
            <div class="muted small">
              {t('mem.original')} · {dateTime(e.at)}
              {e.channel ? ` · ${e.channel}` : ''}
              {e.speaker ? ` · ${e.speaker}` : ''}
            </div>
            <div>{e.text}</div>
          </>
        )}
      </Show>
    </blockquote>
  );
}
