/**
 * One EventSource on /api/v1/events for the whole page; views subscribe by event name. The
 * browser reconnects by itself after a dropped connection and sends Last-Event-ID, so the server
 * replays what was missed. It gives up when the server answers an error status (the session
 * ended, the server restarted), so then this module opens a new stream after a pause, passing the
 * last id it saw as ?last_event_id= to get the same replay.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { StreamEventName, StreamEvents } from './types';

const NAMES: StreamEventName[] = [
  'agent.llm_chain',
  'agent.text_delta',
  'agent.tool_result',
  'agent.answer',
  'entity.state_changed',
  'automation.run',
  'daemon.status',
  'webui.output',
  'confirmation.requested',
  'confirmation.resolved',
  'reset',
];
const RETRY_MS = 3000;

type Handler<K extends StreamEventName> = (payload: StreamEvents[K], id: string) => void;
// biome-ignore lint/suspicious/noExplicitAny: each set only holds handlers of its own event name
const handlers = new Map<StreamEventName, Set<Handler<any>>>();
const statusListeners = new Set<(connected: boolean) => void>();

let source: EventSource | undefined;
let lastId = '';
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let connected = false;
let wanted = false;

function setConnected(value: boolean): void {
  if (value === connected) return;
  connected = value;
  for (const listener of statusListeners) listener(value);
}

function open(): void {
  const url = lastId === '' ? '/api/v1/events' : `/api/v1/events?last_event_id=${encodeURIComponent(lastId)}`;
  const stream = new EventSource(url, { withCredentials: true });
  source = stream;
  stream.onopen = () => setConnected(true);
  stream.onerror = () => {
    setConnected(false);
    if (stream.readyState === EventSource.CLOSED && wanted) {
      clearTimeout(retryTimer);
      retryTimer = setTimeout(() => {
        if (wanted && source === stream) open();
      }, RETRY_MS);
    }
  };
  for (const name of NAMES) {
    stream.addEventListener(name, (event) => {
      const message = event as MessageEvent<string>;
      if (message.lastEventId) lastId = message.lastEventId;
      let payload: unknown;
      try {
        payload = JSON.parse(message.data);
      } catch {
        payload = {};
      }
      for (const handler of handlers.get(name) ?? []) handler(payload as never, message.lastEventId);
    });
  }
}

/** Opens the stream (after login). */
export function connectEvents(): void {
  wanted = true;
  if (source === undefined || source.readyState === EventSource.CLOSED) open();
}

/** Closes the stream (logout). */
export function disconnectEvents(): void {
  wanted = false;
  clearTimeout(retryTimer);
  source?.close();
  source = undefined;
  setConnected(false);
}

export function subscribe<K extends StreamEventName>(name: K, handler: Handler<K>): () => void {
  let set = handlers.get(name);
  if (set === undefined) {
    set = new Set();
    handlers.set(name, set);
  }
  set.add(handler);
  return () => set.delete(handler);
}

/** Subscribes for as long as the component is mounted; the latest handler is always the one called. */
export function useEvent<K extends StreamEventName>(name: K, handler: Handler<K>): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => subscribe(name, (payload, id) => latest.current(payload, id)), [name]);
}

/** Whether the event stream is open now. */
export function useConnected(): boolean {
  const [value, setValue] = useState(connected);
  useEffect(() => {
    statusListeners.add(setValue);
    setValue(connected);
    return () => {
      statusListeners.delete(setValue);
    };
  }, []);
  return value;
}
