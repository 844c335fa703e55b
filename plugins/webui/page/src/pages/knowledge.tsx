/**
 * The knowledge library: the category tree (collapsible, with counts), a search that a click on
 * a category scopes to it — shown as "In: recipes/soup" with a reset back to the whole library —
 * the entries of the scoped category, an entry's content with its attachments, and creating and
 * deleting entries.
 */
import { useState } from 'preact/hooks';
import { api, encodePath } from '../api';
import { bytes, t } from '../i18n';
import type { KbGetResult, KbSearchResult, KnowledgeTreeNode } from '../types';
import { ActionButton, ErrorLine, PanelHead, Show, useLoad, useSubmit } from '../ui';

export function KnowledgeView() {
  const tree = useLoad((signal) => api.get<KnowledgeTreeNode>('/knowledge/tree', { items: false }, signal), []);
  const [scope, setScope] = useState('');
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const changed = () => {
    tree.reload();
    setGeneration((g) => g + 1);
  };

  return (
    <section class="knowledge split">
      <aside class="card tree-box">
        <h2>{t('kb.categories')}</h2>
        <Show loaded={tree}>
          {(root) =>
            root.total_count === 0 && root.children.length === 0 ? (
              <p class="muted">{t('kb.empty')}</p>
            ) : (
              <ul class="tree">
                {root.children.map((node) => (
                  <TreeItem key={node.path} node={node} scope={scope} onScope={setScope} />
                ))}
              </ul>
            )
          }
        </Show>
      </aside>
      <div class="main-col">
        <div class="scope" data-testid="kb-scope">
          {scope === '' ? (
            <span class="muted">{t('kb.whole')}</span>
          ) : (
            <>
              <span class="scope-label" data-testid="kb-scope-label">
                {t('kb.scope', { category: scope })}
              </span>
              <button type="button" class="link" onClick={() => setScope('')} data-testid="kb-scope-reset">
                {t('kb.whole')}
              </button>
            </>
          )}
        </div>
        <Search scope={scope} generation={generation} onOpen={setOpen} />
        {open !== undefined && (
          <Entry
            name={open}
            onClose={() => setOpen(undefined)}
            onDeleted={() => {
              setOpen(undefined);
              changed();
            }}
          />
        )}
        <CreateForm scope={scope} onCreated={changed} />
      </div>
    </section>
  );
}

function TreeItem({ node, scope, onScope }: { node: KnowledgeTreeNode; scope: string; onScope: (path: string) => void }) {
  // Expanded while the scope is at or below it, so the chosen category stays visible.
  const [expanded, setExpanded] = useState(scope === node.path || scope.startsWith(`${node.path}/`));
  const hasChildren = node.children.length > 0;
  return (
    <li>
      <div class={scope === node.path ? 'tree-row selected' : 'tree-row'}>
        {hasChildren ? (
          <button type="button" class="caret" aria-label={node.name} aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
            {expanded ? '▾' : '▸'}
          </button>
        ) : (
          <span class="caret" />
        )}
        <button
          type="button"
          class="link category"
          data-category={node.path}
          aria-pressed={scope === node.path}
          onClick={() => onScope(node.path)}
        >
          {node.name}
        </button>
        <span class="count">{t('kb.count', { count: node.total_count })}</span>
      </div>
      {hasChildren && expanded && (
        <ul>
          {node.children.map((child) => (
            <TreeItem key={child.path} node={child} scope={scope} onScope={onScope} />
          ))}
        </ul>
      )}
    </li>
  );
}

function Search({ scope, generation, onOpen }: { scope: string; generation: number; onOpen: (name: string) => void }) {
  const [text, setText] = useState('');
  const [query, setQuery] = useState('');
  const hits = useLoad(
    async (signal) => {
      if (query !== '') {
        const result = await api.get<KbSearchResult>('/knowledge/search', { q: query, category: scope, limit: 20 }, signal);
        return result.hits.map((h) => ({ name: h.name, text: h.snippet }));
      }
      if (scope === '') return [];
      // Scoped without a query: the entries right in the category, to browse.
      const node = await api.get<KnowledgeTreeNode>('/knowledge/tree', { category: scope, depth: 0, items: true }, signal);
      return (node.items ?? []).map((i) => ({ name: i.path, text: i.preview }));
    },
    [query, scope, generation],
  );
  return (
    <div class="card">
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(text.trim());
        }}
      >
        <input
          type="search"
          value={text}
          placeholder={t('kb.search_placeholder')}
          aria-label={t('kb.search_placeholder')}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit">{t('common.search')}</button>
      </form>
      <Show loaded={hits}>
        {(list) =>
          list.length === 0 ? (
            query !== '' && <p class="muted">{t('kb.no_hits')}</p>
          ) : (
            <ul class="hits" data-testid="kb-hits">
              {list.map((hit) => (
                <li key={hit.name}>
                  <button type="button" class="link" data-entry={hit.name} onClick={() => onOpen(hit.name)}>
                    {hit.name}
                  </button>
                  <p class="muted small">{hit.text}</p>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </div>
  );
}

function Entry({ name, onClose, onDeleted }: { name: string; onClose: () => void; onDeleted: () => void }) {
  const entry = useLoad((signal) => api.get<KbGetResult>(`/knowledge/entries/${encodePath(name)}`, {}, signal), [name]);
  return (
    <article class="card entry" data-testid="kb-entry">
      <PanelHead title={name} onClose={onClose} />
      <Show loaded={entry}>
        {(data) => (
          <>
            <pre class="content">{data.content}</pre>
            {data.media.length > 0 && (
              <>
                <h3>{t('kb.attachments')}</h3>
                <ul class="plain">
                  {data.media.map((m) => (
                    <li key={m.file}>
                      <a href={`/api/v1/knowledge/media/${encodePath(m.file)}`} target="_blank" rel="noopener noreferrer">
                        {m.file}
                      </a>{' '}
                      <span class="muted small">
                        {m.type}, {bytes(m.bytes)}
                      </span>
                    </li>
                  ))}
                </ul>
              </>
            )}
            <ActionButton
              class="danger"
              confirm={t('common.confirm_delete', { name: data.name })}
              action={async () => {
                await api.del(`/knowledge/entries/${encodePath(data.name)}`);
                onDeleted();
              }}
            >
              {t('common.delete')}
            </ActionButton>
          </>
        )}
      </Show>
    </article>
  );
}

function CreateForm({ scope, onCreated }: { scope: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [content, setContent] = useState('');
  const [overwrite, setOverwrite] = useState(false);
  const [done, setDone] = useState<string | undefined>(undefined);
  const submit = useSubmit(async () => {
    setDone(undefined);
    const result = await api.post<{ name: string }>('/knowledge/entries', { name: name.trim(), content, overwrite });
    setDone(t('kb.created', { name: result.name }));
    setName('');
    setContent('');
    onCreated();
  });
  return (
    <details class="card">
      <summary>{t('kb.new')}</summary>
      <form class="stack" onSubmit={submit.onSubmit}>
        <label>
          {t('kb.name')}
          <input
            value={name}
            required
            placeholder={scope === '' ? 'recipes/soup/tomato_soup' : `${scope}/…`}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label>
          {t('kb.content')}
          <textarea rows={6} value={content} required onInput={(e) => setContent(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={overwrite} onChange={(e) => setOverwrite(e.currentTarget.checked)} />
          {t('kb.overwrite')}
        </label>
        <button type="submit" class="primary" disabled={submit.busy}>
          {t('kb.create')}
        </button>
        <ErrorLine error={submit.error} />
        {done && <p class="ok">{done}</p>}
      </form>
    </details>
  );
}
