/**
 * Tool sequences (the seq plugin, docs/sequences.md): each with its description, tier and steps;
 * run one with its declared arguments and see what it did; delete one after saying yes. A logged-in
 * page is the owner, and seq.run from the owner runs any tier, so a sequence with a dangerous step
 * first shows the approval card (the steps it would run, Approve / Refuse) as the approvals above
 * every view do: nothing dangerous runs from one click.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { type StringKey, t } from '../i18n';
import { ActionButton, ErrorLine, pretty, Show, useLoad } from '../ui';

interface ArgSpec {
  type: string;
  required: boolean;
  description?: string;
  default?: unknown;
}

export interface SequenceView {
  name: string;
  description: string;
  in: Record<string, ArgSpec>;
  tier: string;
  groups: Array<{ name: string; when?: string; tools: string[] }>;
}

/** A stored row that no longer reads: listed so that it can be deleted. */
interface BrokenSequence {
  name: string;
  broken: string;
}

type Listed = SequenceView | BrokenSequence;

interface RunAnswer {
  sequence: string;
  tier: string;
  groups: Array<{ name: string; mode: string; calls: unknown[] }>;
  results: Record<string, unknown>;
}

const isBroken = (entry: Listed): entry is BrokenSequence => 'broken' in entry;
const pathOf = (name: string) => `/sequences/${encodeURIComponent(name)}`;

export function SequencesView() {
  const list = useLoad((signal) => api.get<{ sequences: Listed[] }>('/sequences', undefined, signal), []);
  return (
    <section class="sequences">
      <div class="row wrap">
        <p class="muted small grow">{t('seq.intro')}</p>
        <button type="button" onClick={list.reload}>
          {t('common.refresh')}
        </button>
      </div>
      <Show loaded={list}>
        {(data) =>
          data.sequences.length === 0 ? (
            <p class="muted" data-testid="seq-empty">
              {t('seq.empty')}
            </p>
          ) : (
            <ul class="cards">
              {data.sequences.map((entry) =>
                isBroken(entry) ? (
                  <Broken key={entry.name} entry={entry} onChanged={list.reload} />
                ) : (
                  <Sequence key={entry.name} sequence={entry} onChanged={list.reload} />
                ),
              )}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

function DeleteButton({ name, onChanged }: { name: string; onChanged: () => void }) {
  return (
    <ActionButton
      class="danger"
      data-testid="seq-delete"
      confirm={t('seq.confirm_delete', { name })}
      action={async () => {
        await api.del(pathOf(name));
        onChanged();
      }}
    >
      {t('common.delete')}
    </ActionButton>
  );
}

function Broken({ entry, onChanged }: { entry: BrokenSequence; onChanged: () => void }) {
  return (
    <li class="card sequence" data-sequence={entry.name}>
      <h2>{entry.name}</h2>
      <p class="error-text small">{t('seq.broken', { error: entry.broken })}</p>
      <DeleteButton name={entry.name} onChanged={onChanged} />
    </li>
  );
}

function Sequence({ sequence, onChanged }: { sequence: SequenceView; onChanged: () => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [asking, setAsking] = useState(false);
  const [outcome, setOutcome] = useState<RunAnswer | undefined>(undefined);
  const [argError, setArgError] = useState<string | undefined>(undefined);
  const names = Object.keys(sequence.in);
  const dangerous = sequence.tier === 'dangerous';
  const steps = sequence.groups.reduce((n, g) => n + g.tools.length, 0);

  const run = async () => {
    const args = readArgs(sequence.in, values);
    if (typeof args === 'string') {
      setArgError(args);
      return;
    }
    setArgError(undefined);
    setOutcome(undefined);
    const answer = await api.post<RunAnswer>(`${pathOf(sequence.name)}/run`, { args });
    setAsking(false);
    setOutcome(answer);
  };

  return (
    <li class="card sequence" data-sequence={sequence.name}>
      <div class="panel-head">
        <h2>{sequence.name}</h2>
        <span class={`badge tier-${sequence.tier}`} data-testid="seq-tier">
          {tierText(sequence.tier)}
        </span>
      </div>
      {sequence.description !== '' && <p class="small">{sequence.description}</p>}
      <ol class="steps small" data-testid="seq-steps">
        {sequence.groups.map((group) => (
          <li key={group.name}>
            <strong>{group.name}</strong>
            {group.when !== undefined && <span class="muted"> ({t('seq.when', { when: group.when })})</span>}:{' '}
            {group.tools.map((tool, i) => (
              <span key={`${tool}-${i}`}>
                {i > 0 && ', '}
                <code>{tool}</code>
              </span>
            ))}
          </li>
        ))}
      </ol>
      {names.length > 0 && (
        <fieldset class="seq-args">
          <legend class="label">{t('seq.args')}</legend>
          {names.map((name) => (
            <ArgField
              key={name}
              name={name}
              spec={sequence.in[name] as ArgSpec}
              value={values[name] ?? ''}
              onChange={(value) => setValues((old) => ({ ...old, [name]: value }))}
            />
          ))}
        </fieldset>
      )}
      <ErrorLine error={argError} />
      {asking ? (
        <article class="approval" data-testid="seq-approval">
          <p>
            <strong>{t('seq.approve_title', { name: sequence.name })}</strong>
          </p>
          <p class="warn-text small">{t('seq.approve_why', { count: steps })}</p>
          <pre class="args">{stepList(sequence)}</pre>
          <div class="row wrap">
            <ActionButton class="primary" data-testid="seq-approve" action={run}>
              {t('ap.approve')}
            </ActionButton>
            <button type="button" data-testid="seq-refuse" onClick={() => setAsking(false)}>
              {t('ap.deny')}
            </button>
          </div>
        </article>
      ) : (
        <div class="row wrap">
          {dangerous ? (
            <button type="button" class="primary" data-testid="seq-run" onClick={() => setAsking(true)}>
              {t('seq.run')}
            </button>
          ) : (
            <ActionButton class="primary" data-testid="seq-run" action={run}>
              {t('seq.run')}
            </ActionButton>
          )}
          <DeleteButton name={sequence.name} onChanged={onChanged} />
        </div>
      )}
      {outcome && (
        <div class="seq-outcome" data-testid="seq-outcome">
          <p class="small">{t('seq.done', { name: outcome.sequence, count: outcome.groups.reduce((n, g) => n + g.calls.length, 0) })}</p>
          {Object.keys(outcome.results).length > 0 && <pre class="args">{pretty(outcome.results)}</pre>}
          <button type="button" class="link" onClick={() => setOutcome(undefined)}>
            {t('common.close')}
          </button>
        </div>
      )}
    </li>
  );
}

function ArgField({ name, spec, value, onChange }: { name: string; spec: ArgSpec; value: string; onChange: (value: string) => void }) {
  const hint = [
    spec.type,
    spec.required ? t('seq.required') : undefined,
    spec.default !== undefined ? t('seq.default', { value: JSON.stringify(spec.default) }) : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
  const id = `seq-arg-${name}`;
  return (
    <label class="seq-arg" for={id}>
      <span>
        <code>{name}</code> <span class="muted small">{hint}</span>
      </span>
      {spec.description && <span class="muted small">{spec.description}</span>}
      {spec.type === 'boolean' ? (
        <select id={id} value={value} data-arg={name} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">—</option>
          <option value="true">{t('seq.yes')}</option>
          <option value="false">{t('seq.no')}</option>
        </select>
      ) : (
        <input
          id={id}
          data-arg={name}
          type={spec.type === 'number' || spec.type === 'integer' ? 'number' : 'text'}
          step={spec.type === 'integer' ? 1 : 'any'}
          value={value}
          required={spec.required}
          placeholder={spec.type === 'object' || spec.type === 'array' || spec.type === 'any' ? 'JSON' : ''}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      )}
    </label>
  );
}

/** The arguments typed in, as the declared types; an argument left empty is not sent (its default applies). A message when one does not read. */
export function readArgs(specs: Record<string, ArgSpec>, values: Record<string, string>): Record<string, unknown> | string {
  const args: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const text = (values[name] ?? '').trim();
    if (text === '') {
      if (spec.required && spec.default === undefined) return t('seq.arg_missing', { name });
      continue;
    }
    if (spec.type === 'string') args[name] = values[name];
    else if (spec.type === 'boolean') args[name] = text === 'true';
    else if (spec.type === 'number' || spec.type === 'integer') {
      const number = Number(text);
      if (!Number.isFinite(number) || (spec.type === 'integer' && !Number.isInteger(number)))
        return t('seq.arg_bad', { name, type: spec.type });
      args[name] = number;
    } else {
      try {
        args[name] = JSON.parse(text);
      } catch {
        return t('seq.arg_bad', { name, type: spec.type });
      }
    }
  }
  return args;
}

function stepList(sequence: SequenceView): string {
  return sequence.groups.map((g, i) => `${i + 1}) ${g.name}: ${g.tools.join(', ')}`).join('\n');
}

function tierText(tier: string): string {
  return ['read', 'act', 'dangerous'].includes(tier) ? t(`seq.tier.${tier}` as StringKey) : tier;
}
