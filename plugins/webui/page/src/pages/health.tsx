/**
 * How the daemon is doing: the health checks the watchdog depends on, the status (version,
 * uptime, services, notices, settings waiting for a restart) and the recent log lines, filtered
 * by level, text or audit records only.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { bytes, dateTime, duration, t } from '../i18n';
import type { HealthReport, LogList, StatusReport } from '../types';
import { Show, useLoad } from '../ui';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
/** Fields every line has, shown in the line's head rather than in its details. */
const HEAD_FIELDS = new Set(['level', 'time', 'subsystem', 'msg', 'pid', 'hostname']);

export function HealthView() {
  const health = useLoad((signal) => api.get<HealthReport>('/health', {}, signal), []);
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
      <div class="card">
        <Show loaded={health}>
          {(report) => (
            <>
              <h2 class={report.healthy ? 'ok' : 'error-text'} data-testid="health-state">
                {report.healthy ? t('hl.healthy') : t('hl.unhealthy')}
              </h2>
              <ul class="plain">
                {report.checks.map((check) => (
                  <li key={check.name}>
                    <span class={check.ok ? 'ok' : 'error-text'}>{check.ok ? '✓' : '✗'}</span> <strong>{check.name}</strong>{' '}
                    <span class="muted small">{check.detail}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </Show>
      </div>
      <div class="card">
        <h2>{t('hl.status')}</h2>
        <Show loaded={status}>{(s) => <Status status={s} />}</Show>
      </div>
      <Logs />
    </section>
  );
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
