/**
 * The navigation tabs. On a phone they are wider than the screen and scroll sideways; without a
 * hint the last visible tab is just cut off ("Se…"). So each edge fades while there are more tabs
 * beyond it (data-more-left / data-more-right, kept up to date on scroll and resize), and the
 * active tab is scrolled into view whenever the route changes.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type StringKey, t } from './i18n';
import { href, VIEWS, type View } from './router';

/** Less than this beyond an edge is rounding, not another tab. */
const EDGE_PX = 2;

export function TabBar({ active }: { active: View }) {
  const nav = useRef<HTMLElement>(null);
  const [more, setMore] = useState({ left: false, right: false });

  useEffect(() => {
    const element = nav.current;
    if (!element) return;
    const update = () => {
      const left = element.scrollLeft > EDGE_PX;
      const right = element.scrollLeft + element.clientWidth < element.scrollWidth - EDGE_PX;
      setMore((old) => (old.left === left && old.right === right ? old : { left, right }));
    };
    update();
    element.addEventListener('scroll', update, { passive: true });
    const observer = new ResizeObserver(update);
    observer.observe(element);
    return () => {
      element.removeEventListener('scroll', update);
      observer.disconnect();
    };
  }, []);

  useEffect(() => {
    const element = nav.current;
    const tab = element?.querySelector<HTMLElement>('a.active');
    if (!element || !tab) return;
    // Only the bar scrolls (scrollIntoView would scroll the page too); the tab is centred when it can be.
    const bar = element.getBoundingClientRect();
    const box = tab.getBoundingClientRect();
    const target = element.scrollLeft + box.left - bar.left - (bar.width - box.width) / 2;
    element.scrollTo({ left: Math.max(0, target), behavior: 'smooth' });
  }, [active]);

  return (
    <div class="tabs-frame" data-more-left={more.left} data-more-right={more.right}>
      <nav class="tabs" aria-label="main" ref={nav}>
        {VIEWS.map((view) => (
          <a key={view} href={href(view)} class={active === view ? 'active' : ''} aria-current={active === view ? 'page' : undefined}>
            {t(`nav.${view}` as StringKey)}
          </a>
        ))}
      </nav>
    </div>
  );
}
