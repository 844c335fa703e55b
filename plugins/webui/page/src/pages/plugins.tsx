/**
 * Plugins: each with its state, kind and tools; enable, disable and reload; install or upgrade one
 * from an archive file, which is sent as the request body and unpacked by the daemon.
 */
import { useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { t } from '../i18n';
import type { PluginStatus, PluginsListResult } from '../types';
import { ActionButton, ErrorLine, Show, useLoad, useSubmit } from '../ui';

export function PluginsView() {
  const list = useLoad((signal) => api.get<PluginsListResult>('/plugins', {}, signal), []);
  return (
    <section class="plugins">
      <Install onInstalled={list.reload} />
      <Show loaded={list}>
        {(data) => (
          <>
            <ul class="cards">
              {data.plugins.map((plugin) => (
                <Plugin key={plugin.name} plugin={plugin} onChanged={list.reload} />
              ))}
            </ul>
            {data.rejected.length > 0 && (
              <div class="card">
                <h2>{t('plug.rejected')}</h2>
                <ul class="plain">
                  {data.rejected.map((r) => (
                    <li key={r.dir}>
                      <code>{r.dir}</code> <span class="error-text">{r.error}</span>
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </>
        )}
      </Show>
    </section>
  );
}

function Plugin({ plugin, onChanged }: { plugin: PluginStatus; onChanged: () => void }) {
  const path = `/plugins/${encodeURIComponent(plugin.name)}`;
  const act = (what: 'enable' | 'disable' | 'reload') => async () => {
    await api.post(`${path}/${what}`);
    onChanged();
  };
  return (
    <li class="card plugin" data-plugin={plugin.name}>
      <div class="panel-head">
        <h2>
          {plugin.name} <span class="muted small">{plugin.version}</span>
        </h2>
        <span class={`badge state-${plugin.state}`}>{plugin.state}</span>
      </div>
      <p class="small">{plugin.description}</p>
      <p class="muted small">
        {plugin.kind} · {plugin.origin}
        {plugin.tools.length > 0 && ` · ${t('plug.tools', { names: plugin.tools.join(', ') })}`}
      </p>
      {plugin.error && <p class="error">{plugin.error}</p>}
      <div class="buttons">
        {plugin.enabled ? (
          <ActionButton action={act('disable')}>{t('plug.disable')}</ActionButton>
        ) : (
          <ActionButton action={act('enable')}>{t('plug.enable')}</ActionButton>
        )}
        <ActionButton action={act('reload')} disabled={!plugin.enabled}>
          {t('plug.reload')}
        </ActionButton>
      </div>
    </li>
  );
}

function Install({ onInstalled }: { onInstalled: () => void }) {
  const file = useRef<HTMLInputElement>(null);
  const [done, setDone] = useState<string | undefined>(undefined);
  const submit = useSubmit(async () => {
    setDone(undefined);
    const chosen = file.current?.files?.[0];
    if (!chosen) return;
    const result = await api.upload<{ name?: string }>('/plugins/install', chosen, { filename: chosen.name });
    setDone(t('plug.installed', { name: result.name ?? chosen.name }));
    if (file.current) file.current.value = '';
    onInstalled();
  });
  return (
    <form class="card row" onSubmit={submit.onSubmit}>
      <label class="grow">
        {t('plug.install')}
        <input ref={file} type="file" accept=".tgz,.tar.gz,.zip" required />
      </label>
      <button type="submit" class="primary" disabled={submit.busy}>
        {t('plug.install_button')}
      </button>
      <ErrorLine error={submit.error} />
      {done && <p class="ok">{done}</p>}
    </form>
  );
}
