/**
 * Small building blocks every view uses: loading data with its error, a button that disables
 * itself while its action is in flight and shows the action's error next to it, and the error
 * line. Errors always carry the server's message and code so a person can act on them.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api';
import { t } from './i18n';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
  /** Replaces the data locally (after a mutation or a live event). */
  set: (update: (previous: T | undefined) => T | undefined) => void;
}

/** Runs `load` when `deps` change; an older answer arriving late never overwrites a newer one. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    latest
      .current(controller.signal)
      .then((value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
      })
      .catch((e: unknown) => {
        if (!controller.signal.aborted) setError(errorText(e));
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const set = useCallback((update: (previous: T | undefined) => T | undefined) => setData(update), []);
  return { data, error, loading, reload, set };
}

export function ErrorLine({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

/** Loading, error (with retry) or the content. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.data === undefined) {
    if (loaded.error) {
      return (
        <div class="error-box" role="alert">
          <span>{loaded.error}</span>
          <button type="button" onClick={loaded.reload}>
            {t('common.retry')}
          </button>
        </div>
      );
    }
    return <p class="muted">{t('common.loading')}</p>;
  }
  return (
    <>
      {loaded.error && <ErrorLine error={loaded.error} />}
      {children(loaded.data)}
    </>
  );
}

type ButtonProps = Omit<JSX.HTMLAttributes<HTMLButtonElement>, 'onClick' | 'disabled'> & {
  /** The action; the button stays disabled until it settles. */
  action: () => Promise<unknown>;
  disabled?: boolean;
  /** Asked first; the action runs only when the person agrees. */
  confirm?: string;
  children: ComponentChildren;
};

/** A button for a change: disabled while its request is in flight, its error shown next to it. */
export function ActionButton({ action, disabled, confirm, children, class: className, ...rest }: ButtonProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const run = async () => {
    if (confirm !== undefined && !window.confirm(confirm)) return;
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      if (mounted.current) setError(errorText(e));
    } finally {
      if (mounted.current) setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" {...rest} class={className} disabled={disabled === true || busy} aria-busy={busy} onClick={run}>
        {children}
      </button>
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

/** Runs a form's submit action with the same in-flight and error handling as ActionButton. */
export function useSubmit(action: () => Promise<unknown>): {
  busy: boolean;
  error: string | undefined;
  onSubmit: (event: Event) => void;
  setError: (error: string | undefined) => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const onSubmit = (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    action()
      .catch((e: unknown) => setError(errorText(e)))
      .finally(() => setBusy(false));
  };
  return { busy, error, onSubmit, setError };
}

/** The heading of a panel that opens over a view (a chart, an edit form, an entry), with its close button. */
export function PanelHead({ title, onClose }: { title: ComponentChildren; onClose: () => void }) {
  return (
    <div class="panel-head">
      <h2>{title}</h2>
      <button type="button" onClick={onClose}>
        {t('common.close')}
      </button>
    </div>
  );
}

/** Re-renders every `ms` (relative times like "2 minutes ago" stay true). */
export function useTick(ms: number): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), ms);
    return () => clearInterval(timer);
  }, [ms]);
}

/** JSON for people: strings as they are, everything else indented. */
export function pretty(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}
