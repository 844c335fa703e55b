/**
 * Dangerous actions waiting for the owner, above every view: what would run exactly, who asked
 * and how far that request was trusted, with Approve and Refuse. A logged-in page is the owner,
 * so deciding here is an owner decision (POST /confirmations/:code/approve|deny). The list follows
 * the confirmation.* events and is fetched again when the stream resets.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { useEvent } from './events';
import { relativeTime, type StringKey, t } from './i18n';
import type { ConfirmationRequest } from './types';
import { ActionButton, pretty, useLoad, useTick } from './ui';

interface ApproveAnswer {
  receipt: { status: string; text?: string };
}

export function Approvals() {
  const loaded = useLoad((signal) => api.get<{ pending: ConfirmationRequest[] }>('/confirmations', undefined, signal), []);
  useTick(30_000);
  useEvent('confirmation.requested', (request) =>
    loaded.set((previous) => ({ pending: [...(previous?.pending ?? []).filter((p) => p.code !== request.code), request] })),
  );
  useEvent('confirmation.resolved', ({ code }) =>
    loaded.set((previous) => previous && { pending: previous.pending.filter((p) => p.code !== code) }),
  );
  useEvent('reset', () => loaded.reload());
  // What the last approval ran, kept after its request left the list.
  const [outcome, setOutcome] = useState<string | undefined>(undefined);
  // The decided request leaves the list locally and by its confirmation.resolved event; fetching the
  // list again here could answer after a newer request arrived and drop it.
  const done = (code: string, text?: string) => {
    setOutcome(text);
    loaded.set((previous) => previous && { pending: previous.pending.filter((p) => p.code !== code) });
  };
  const now = Date.now();
  const pending = (loaded.data?.pending ?? []).filter((p) => p.expires_at > now);
  if (pending.length === 0 && outcome === undefined) return null;
  return (
    <section class="card approvals" aria-label={t('ap.title')} data-testid="approvals">
      {pending.length > 0 && <h2>{t('ap.title')}</h2>}
      {pending.map((p) => (
        <Approval key={p.code} request={p} onDone={done} />
      ))}
      {outcome !== undefined && (
        <div class="row wrap" data-testid="approval-outcome">
          <pre class="args">{outcome}</pre>
          <button type="button" class="link" onClick={() => setOutcome(undefined)}>
            {t('common.close')}
          </button>
        </div>
      )}
    </section>
  );
}

function Approval({ request, onDone }: { request: ConfirmationRequest; onDone: (code: string, outcome?: string) => void }) {
  const { origin, trust } = request;
  const sender = origin.sender;
  return (
    <article class="approval" data-code={request.code}>
      <p>
        <strong>{t('ap.wants', { tool: request.tool })}</strong>
      </p>
      <pre class="args">{pretty(request.arguments)}</pre>
      <p class={sender.trust === 'owner' ? 'muted' : 'warn-text'}>
        {t('ap.from', {
          channel: origin.channel,
          sender: sender.id,
          trust: t(`ap.trust.${sender.trust}` as StringKey),
          proof: sender.proof,
        })}
        {trust.lowered_by.length > 0 && `, ${t('ap.after', { what: trust.lowered_by.join(', ') })}`}
      </p>
      <p class="muted">{t('ap.expires', { time: relativeTime(request.expires_at) })}</p>
      <div class="row wrap">
        <ActionButton
          class="primary"
          data-testid="approve"
          action={async () => {
            const answer = await api.post<ApproveAnswer>(`/confirmations/${request.code}/approve`);
            onDone(request.code, t('ap.ran', { text: answer.receipt.text ?? answer.receipt.status }));
          }}
        >
          {t('ap.approve')}
        </ActionButton>
        <ActionButton data-testid="deny" action={() => api.post(`/confirmations/${request.code}/deny`).then(() => onDone(request.code))}>
          {t('ap.deny')}
        </ActionButton>
      </div>
    </article>
  );
}
