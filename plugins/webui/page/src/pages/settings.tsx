/**
 * The settings form, generated from the typed definitions GET /settings answers: one field per
 * key, grouped by category, its input chosen by type, enum and bounds. A secret is never shown
 * (the server masks it) and is written only when something new was typed. Save and reset answer
 * with the setting as it is now; the server's refusal (out of range, wrong type) is shown next to
 * the field it concerns.
 */
import { useMemo, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { LANGUAGE, t } from '../i18n';
import type { SettingView } from '../types';
import { ErrorLine, Show, useLoad } from '../ui';

export function SettingsView() {
  const settings = useLoad((signal) => api.get<SettingView[]>('/settings', {}, signal), []);
  const [filter, setFilter] = useState('');
  const replace = (setting: SettingView) => settings.set((list) => list?.map((s) => (s.key === setting.key ? setting : s)));
  return (
    <section class="settings">
      <input
        type="search"
        class="wide"
        value={filter}
        placeholder={t('set.filter')}
        aria-label={t('set.filter')}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      <Show loaded={settings}>{(list) => <Categories list={list} filter={filter} onChanged={replace} />}</Show>
    </section>
  );
}

/** The description in the page's language; a setting without a Chinese one (an external plugin's) shows its English one. */
function description(setting: SettingView): string {
  return LANGUAGE === 'zh' ? (setting.description_zh ?? setting.description) : setting.description;
}

function Categories({ list, filter, onChanged }: { list: SettingView[]; filter: string; onChanged: (s: SettingView) => void }) {
  const groups = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const byCategory = new Map<string, SettingView[]>();
    for (const setting of list) {
      // Either language's description matches: a Chinese reader may search for an English term too.
      const texts = [setting.key, setting.description, setting.description_zh ?? ''];
      if (needle !== '' && !texts.some((text) => text.toLowerCase().includes(needle))) continue;
      const group = byCategory.get(setting.category) ?? [];
      group.push(setting);
      byCategory.set(setting.category, group);
    }
    return [...byCategory.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [list, filter]);
  if (groups.length === 0) return <p class="muted">{t('common.empty')}</p>;
  const searching = filter.trim() !== '';
  return (
    <>
      {groups.map(([category, settings]) => (
        <details class="card category" key={`${category}:${searching}`} open={searching}>
          <summary>
            <strong>{category}</strong> <span class="muted small">({settings.length})</span>
          </summary>
          {settings.map((setting) => (
            <Field key={setting.key} setting={setting} onChanged={onChanged} />
          ))}
        </details>
      ))}
    </>
  );
}

/** What the server shows instead of a secret (src/config/settings-registry.ts SECRET_MASK). */
const SECRET_MASK = '********';

/** The text a field starts with: secrets empty (typing replaces them), structures as JSON. */
function draftOf(setting: SettingView): string {
  if (setting.secret) return '';
  if (setting.type === 'object' || setting.type === 'array') return JSON.stringify(setting.value, null, 2);
  return setting.value === null || setting.value === undefined ? '' : String(setting.value);
}

/** The draft as the value to send; throws a message for a person when it cannot be one. */
function draftValue(setting: SettingView, draft: string): unknown {
  switch (setting.type) {
    case 'boolean':
      return draft === 'true';
    case 'integer':
    case 'number': {
      const n = Number(draft);
      if (draft.trim() === '' || !Number.isFinite(n)) throw new Error(`${setting.key}: ${JSON.stringify(draft)} is not a number`);
      return n;
    }
    case 'object':
    case 'array': {
      let value: unknown;
      try {
        value = JSON.parse(draft);
      } catch (e) {
        throw new Error(t('set.invalid_json', { problem: (e as Error).message }));
      }
      // The server shows nested secrets (an LLM source's api_key) masked; sent back, the mask would become the key.
      if (draft.includes(JSON.stringify(SECRET_MASK))) throw new Error(t('set.masked', { mask: SECRET_MASK }));
      return value;
    }
    default:
      return draft;
  }
}

function Field({ setting, onChanged }: { setting: SettingView; onChanged: (s: SettingView) => void }) {
  const [draft, setDraft] = useState(() => draftOf(setting));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const dirty = setting.secret ? draft !== '' : draft !== draftOf(setting);
  const id = `setting-${setting.key}`;

  const run = async (change: () => Promise<SettingView>) => {
    setBusy(true);
    setError(undefined);
    setSaved(false);
    try {
      const now = await change();
      onChanged(now);
      setDraft(draftOf(now));
      setSaved(true);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const path = `/settings/${encodeURIComponent(setting.key)}`;
  const save = () => run(async () => api.put<SettingView>(path, { value: draftValue(setting, draft) }));
  // The answer of a reset is read back as the setting view, so the field shows what applies now.
  const reset = () =>
    run(async () => {
      await api.del(path);
      return api.get<SettingView>(path);
    });

  return (
    <div class="field" data-key={setting.key}>
      <label for={id}>
        <code>{setting.key}</code>
        {setting.requires_restart && <span class="badge">{t('set.restart')}</span>}
        {setting.restart_pending && <span class="badge warn">{t('set.restart_pending')}</span>}
      </label>
      <p class="muted small" lang={LANGUAGE === 'zh' && setting.description_zh !== undefined ? 'zh' : 'en'}>
        {description(setting)}
      </p>
      <form
        class="row"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (dirty && !busy) void save();
        }}
      >
        <Input
          id={id}
          setting={setting}
          draft={draft}
          disabled={setting.file_only || busy}
          onDraft={(v) => {
            setDraft(v);
            setSaved(false);
          }}
        />
        {!setting.file_only && (
          <>
            <button type="submit" class="primary" disabled={!dirty || busy}>
              {t('common.save')}
            </button>
            <button type="button" disabled={setting.source !== 'runtime' || busy} onClick={() => void reset()}>
              {t('common.reset')}
            </button>
          </>
        )}
      </form>
      <p class="muted small">
        {setting.file_only && `${t('set.file_only')} `}
        {t('set.source', { source: setting.source })}
        {!setting.secret && ` · ${t('set.default', { value: JSON.stringify(setting.default) })}`}
        {(setting.minimum !== undefined || setting.maximum !== undefined) &&
          ` · ${t('set.range', { min: setting.minimum ?? '−∞', max: setting.maximum ?? '∞' })}`}
        {saved && <span class="ok"> · {t('set.saved')}</span>}
      </p>
      <ErrorLine error={error} />
    </div>
  );
}

function Input({
  id,
  setting,
  draft,
  disabled,
  onDraft,
}: {
  id: string;
  setting: SettingView;
  draft: string;
  disabled: boolean;
  onDraft: (value: string) => void;
}) {
  if (setting.type === 'boolean') {
    return (
      <input
        id={id}
        type="checkbox"
        checked={draft === 'true'}
        disabled={disabled}
        onChange={(e) => onDraft(String(e.currentTarget.checked))}
      />
    );
  }
  if (setting.enum && setting.enum.length > 0) {
    return (
      <select id={id} value={draft} disabled={disabled} onChange={(e) => onDraft(e.currentTarget.value)}>
        {setting.enum.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    );
  }
  if (setting.type === 'object' || setting.type === 'array') {
    return (
      <textarea id={id} rows={4} value={draft} disabled={disabled} spellcheck={false} onInput={(e) => onDraft(e.currentTarget.value)} />
    );
  }
  if (setting.type === 'integer' || setting.type === 'number') {
    return (
      <input
        id={id}
        type="number"
        value={draft}
        disabled={disabled}
        step={setting.type === 'integer' ? 1 : 'any'}
        {...(setting.minimum !== undefined && { min: setting.minimum })}
        {...(setting.maximum !== undefined && { max: setting.maximum })}
        onInput={(e) => onDraft(e.currentTarget.value)}
      />
    );
  }
  return (
    <input
      id={id}
      type={setting.secret ? 'password' : 'text'}
      autocomplete={setting.secret ? 'new-password' : 'off'}
      value={draft}
      disabled={disabled}
      placeholder={setting.secret && setting.value !== '' ? t('set.secret_placeholder') : ''}
      onInput={(e) => onDraft(e.currentTarget.value)}
    />
  );
}
