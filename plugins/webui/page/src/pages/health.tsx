/**
 * How the daemon is doing: each component the supervisor checks (ok, degraded or failed, the worst
 * first, with the reason and since when) and the plugin change on trial, the status (version,
 * uptime, services, notices, settings waiting for a restart) and the recent log lines, filtered
 * by level, text or audit records only. Status is shown by word and symbol as well as colour.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { bytes, dateTime, duration, LANGUAGE, type StringKey, t } from '../i18n';
import type { ComponentHealth, ComponentStatus, HealthAnswer, LogList, StatusReport } from '../types';
import { Show, useLoad } from '../ui';
import { TrialBanner } from './changes';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
/** Fields every line has, shown in the line's head rather than in its details. */
const HEAD_FIELDS = new Set(['level', 'time', 'subsystem', 'msg', 'pid', 'hostname']);

export function HealthView() {
  const health = useLoad((signal) => api.get<HealthAnswer>('/health', {}, signal), []);
  const status = useLoad((signal) => api.get<StatusReport>('/status', {}, signal), []);
  return (
    <section class="health">
      <div class="toolbar">
        <button
          type="button"
          onClick={() => {
            health.reload();
            status.reload();
          }}
        >
          {t('common.refresh')}
        </button>
      </div>
      <Show loaded={health}>{(answer) => <Components answer={answer} />}</Show>
      <div class="card">
        <h2>{t('hl.status')}</h2>
        <Show loaded={status}>{(s) => <Status status={s} />}</Show>
      </div>
      <Logs />
    </section>
  );
}

const COLOUR: Record<ComponentStatus, string> = { ok: 'ok', degraded: 'warn-text', failed: 'error-text' };
const SYMBOL: Record<ComponentStatus, string> = { ok: '✓', degraded: '!', failed: '✗' };
const SEVERITY: Record<ComponentStatus, number> = { failed: 0, degraded: 1, ok: 2 };

function Components({ answer }: { answer: HealthAnswer }) {
  // Stable: components of one status keep the daemon's order (kernel first, then plugins).
  const components = [...answer.components].sort((a, b) => SEVERITY[a.status] - SEVERITY[b.status]);
  return (
    <>
      <div class="card">
        <h2 class={COLOUR[answer.status]} data-testid="health-state" data-status={answer.status}>
          {SYMBOL[answer.status]} {t(`hl.overall.${answer.status}` as StringKey)}
        </h2>
        <p class="muted small">
          {answer.checked_at === null ? t('hl.not_checked') : t('hl.checked', { time: dateTime(answer.checked_at) })}
        </p>
        {!answer.healthy && <p class="error-text">{t('hl.not_healthy')}</p>}
        {components.length === 0 ? (
          <p class="muted">{t('hl.no_components')}</p>
        ) : (
          <ul class="plain" data-testid="health-components">
            {components.map((c) => (
              <Component key={c.name} component={c} />
            ))}
          </ul>
        )}
      </div>
      {answer.trial && <TrialBanner trial={answer.trial} />}
    </>
  );
}

function Component({ component: c }: { component: ComponentHealth }) {
  return (
    <li data-component={c.name} data-status={c.status}>
      <span class={COLOUR[c.status]}>
        {SYMBOL[c.status]} {t(`hl.state.${c.status}` as StringKey)}
      </span>{' '}
      <strong>{c.name}</strong> <span class="small">{componentDetail(c)}</span>
      <br />
      <span class="muted small">
        {t('hl.since', { time: dateTime(c.since) })}
        {c.failures > 0 && ` · ${t('hl.failures', { count: c.failures })}`}
      </span>
    </li>
  );
}

/** The detail in the page's language (a daemon older than detail_zh sends English only). */
function componentDetail(c: ComponentHealth): string {
  return LANGUAGE === 'zh' && typeof c.detail_zh === 'string' && c.detail_zh !== '' ? c.detail_zh : c.detail;
}

function Status({ status: s }: { status: StatusReport }) {
  return (
    <>
      <p>
        <strong>{s.name}</strong> — {s.status}
      </p>
      <p class="muted small">
        {t('hl.version', { version: s.version, pid: s.pid })} · {t('hl.uptime', { time: duration(s.uptime_s) })} ·{' '}
        {t('hl.memory', { rss: bytes(s.memory.rss_bytes), heap: bytes(s.memory.heap_used_bytes) })}
      </p>
      {s.restart_pending.length > 0 && <p class="warn-text">{t('hl.restart_pending', { keys: s.restart_pending.join(', ') })}</p>}
      {s.notices.length > 0 && (
        <>
          <h3>{t('hl.notices')}</h3>
          <ul class="plain">
            {s.notices.map((n) => (
              <li key={n.key} class={n.level === 'error' ? 'error-text' : 'warn-text'}>
                {n.message} <span class="muted small">{dateTime(n.at)}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>{t('hl.services')}</h3>
      <ul class="chips">
        {s.services.map((service) => (
          <li key={service.name} class={`chip state-${service.state}`} title={service.error}>
            {service.name}: {service.state}
          </li>
        ))}
      </ul>
    </>
  );
}

function Logs() {
  const [level, setLevel] = useState('info');
  const [text, setText] = useState('');
  const [audit, setAudit] = useState(false);
  const [query, setQuery] = useState('');
  const logs = useLoad(
    (signal) =>
      api.get<LogList>('/logs', { level: level === '' ? undefined : level, q: query, audit: audit || undefined, limit: 200 }, signal),
    [level, query, audit],
  );
  return (
    <div class="card">
      <h2>{t('hl.logs')}</h2>
      <form
        class="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(text.trim());
        }}
      >
        <label>
          {t('hl.level')}{' '}
          <select value={level} onChange={(e) => setLevel(e.currentTarget.value)}>
            <option value="">{t('hl.all_levels')}</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <input
          type="search"
          value={text}
          placeholder={t('hl.filter')}
          aria-label={t('hl.filter')}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <label class="check">
          <input type="checkbox" checked={audit} onChange={(e) => setAudit(e.currentTarget.checked)} /> {t('hl.audit')}
        </label>
        <button type="submit">{t('common.search')}</button>
        <button type="button" onClick={logs.reload} disabled={logs.loading}>
          {t('common.refresh')}
        </button>
      </form>
      <Show loaded={logs}>
        {(data) => (
          <>
            {data.dropped > 0 && <p class="muted small">{t('hl.dropped', { count: data.dropped })}</p>}
            <ol class="logs" data-testid="log-lines">
              {[...data.lines].reverse().map((line, i) => (
                <LogLine key={`${String(line.time)}-${i}`} line={line} />
              ))}
            </ol>
          </>
        )}
      </Show>
    </div>
  );
}

function LogLine({ line }: { line: Record<string, unknown> }) {
  const rest = Object.fromEntries(Object.entries(line).filter(([k]) => !HEAD_FIELDS.has(k)));
  const level = String(line.level ?? '');
  return (
    <li class={`log level-${level}`}>
      <details>
        <summary>
          <span class="muted small">{dateTime(line.time as string)}</span> <span class="badge">{level}</span>{' '}
          {typeof line.subsystem === 'string' && <code>{line.subsystem}</code>} {String(line.msg ?? '')}
        </summary>
        <pre>{JSON.stringify(rest, null, 2)}</pre>
      </details>
    </li>
  );
}
