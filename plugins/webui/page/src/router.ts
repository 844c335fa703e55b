/**
 * Hash routes (`#/knowledge`, `#/memory/Alice`): the server only has to serve one index.html, and
 * the back button works. The first segment picks the view, the rest is the view's own argument.
 */
import { useEffect, useState } from 'preact/hooks';

export const VIEWS = [
  'chat',
  'home',
  'knowledge',
  'memory',
  'graph',
  'settings',
  'plugins',
  'changes',
  'sequences',
  'agents',
  'health',
] as const;
export type View = (typeof VIEWS)[number];

export interface Route {
  view: View;
  /** Everything after the view, decoded ('' when absent). */
  arg: string;
}

export function parseHash(hash: string): Route {
  const [first = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  const view = (VIEWS as readonly string[]).includes(first) ? (first as View) : 'chat';
  let arg = rest.join('/');
  try {
    arg = decodeURIComponent(arg);
  } catch {
    // a hand-typed hash with a stray % stays as typed
  }
  return { view, arg };
}

export function href(view: View, arg = ''): string {
  return arg === '' ? `#/${view}` : `#/${view}/${encodeURIComponent(arg)}`;
}

export function navigate(view: View, arg = ''): void {
  location.hash = href(view, arg);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
