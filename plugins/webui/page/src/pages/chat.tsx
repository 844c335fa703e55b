/**
 * Chat with the agent: the conversation so far, the text of the answer while the model writes it,
 * each tool call as a collapsible row (name, arguments, result), the final answer, and messages
 * the agent or an automation sent to the page by themselves (a picture sent as an image output is
 * shown, fetched by its media id from the session-checked /api/v1/media route).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type ChatItem, type OutputView, sendMessage, type ToolCallView, type TurnView, useChatItems } from '../chat-store';
import { dateTime, t } from '../i18n';
import { pretty } from '../ui';

export function ChatView() {
  const items = useChatItems();
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const end = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [items]);

  const send = async (event?: Event) => {
    event?.preventDefault();
    const message = text.trim();
    if (message === '' || busy) return;
    setBusy(true);
    setText('');
    try {
      await sendMessage(message);
    } finally {
      setBusy(false);
      input.current?.focus();
    }
  };

  return (
    <section class="chat">
      <div class="messages" aria-live="polite">
        {items.length === 0 && <p class="muted center">{t('chat.empty')}</p>}
        {items.map((item) => (
          <Item key={item.key} item={item} />
        ))}
        <div ref={end} />
      </div>
      <form class="composer" onSubmit={send}>
        <textarea
          ref={input}
          rows={2}
          value={text}
          placeholder={t('chat.placeholder')}
          aria-label={t('chat.placeholder')}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter sends, Shift+Enter starts a new line (IME composition is left alone).
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) void send(e);
          }}
        />
        <button type="submit" class="primary" disabled={busy || text.trim() === ''}>
          {t('chat.send')}
        </button>
      </form>
    </section>
  );
}

function Item({ item }: { item: ChatItem }) {
  if (item.kind === 'output') {
    return (
      <div class="bubble output" data-testid="chat-output">
        <span class="who">
          {t('chat.message')} · {dateTime(item.at)}
        </span>
        {item.image ? <OutputImage image={item.image} /> : <div class="text">{item.text}</div>}
      </div>
    );
  }
  return <Turn turn={item} />;
}

/** A picture the agent sent: at most the bubble's width and a screen's height; a failed load says so instead of a broken icon. */
function OutputImage({ image }: { image: NonNullable<OutputView['image']> }) {
  const [failed, setFailed] = useState(false);
  const alt = image.caption ?? t('chat.image_alt');
  return (
    <figure class="picture">
      {failed ? (
        <p class="error-text" role="alert">
          {t('chat.image_failed')}
        </p>
      ) : (
        <a href={image.src} target="_blank" rel="noopener noreferrer" title={t('chat.image_open')}>
          <img src={image.src} alt={alt} loading="lazy" decoding="async" data-testid="chat-image" onError={() => setFailed(true)} />
        </a>
      )}
      {image.caption !== undefined && <figcaption class="muted small">{image.caption}</figcaption>}
    </figure>
  );
}

function Turn({ turn }: { turn: TurnView }) {
  return (
    <>
      <div class="bubble user">
        <span class="who">{t('chat.you')}</span>
        <div class="text">{turn.user ?? <span class="muted">{t('chat.elsewhere')}</span>}</div>
      </div>
      <div class={`bubble agent ${turn.status}`} data-testid="chat-answer" data-status={turn.status}>
        <span class="who">{t('chat.agent')}</span>
        {turn.tools.map((call) => (
          <ToolCall key={call.id} call={call} />
        ))}
        {turn.answer !== undefined ? (
          <div class="text" data-testid="answer-text">
            {turn.answer}
          </div>
        ) : turn.live !== '' ? (
          <div class="text streaming" data-testid="live-text">
            {turn.live}
          </div>
        ) : turn.status === 'pending' ? (
          <div class="muted">{t('chat.thinking')}</div>
        ) : null}
        {turn.error && (
          <p class="error" role="alert">
            {turn.error}
          </p>
        )}
        {turn.tokens !== undefined && turn.tokens > 0 && <span class="muted small">{t('chat.tokens', { count: turn.tokens })}</span>}
      </div>
    </>
  );
}

function ToolCall({ call }: { call: ToolCallView }) {
  const state = call.ok === undefined ? t('chat.running') : call.ok ? '✓' : t('chat.failed');
  return (
    <details class="tool" data-testid="tool-call">
      <summary>
        <span class="muted">{t('chat.tool_call')}</span> <code>{call.name}</code>{' '}
        <span class={call.ok === false ? 'error-text' : 'muted'}>{state}</span>
      </summary>
      {call.arguments !== '' && (
        <>
          <div class="label">{t('chat.arguments')}</div>
          <pre>{pretty(call.arguments)}</pre>
        </>
      )}
      {call.content !== undefined && (
        <>
          <div class="label">{t('chat.result')}</div>
          <pre>{pretty(call.content)}</pre>
        </>
      )}
    </details>
  );
}
