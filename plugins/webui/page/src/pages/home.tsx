/**
 * The home's devices by area, with their state kept live from entity.state_changed events:
 * switches, lights and fans get a toggle, sensors show value and unit and open their history
 * chart, other devices offer their data-less services (open, close, lock, press, ...). States are
 * in the words of their device class (a door is Open / 开着, src/api/state-words.ts, as the CLI and
 * the replies say them). Diagnostic and config entities (battery, signal, settings) sit under a
 * "Diagnostics" disclosure of their area, out of the main view. The owner renames an entity, moves
 * it and sets its aliases in an edit dialog (PATCH /entities/:id; kept over the driver's values).
 * Below the areas, the Zigbee network where the daemon manages one (zigbee.tsx).
 */
import { useState } from 'preact/hooks';
import { isPrimaryEntity, showStateIn } from '../../../../../src/sdk/api.js';
import { api } from '../api';
import { useEvent } from '../events';
import { formatNumber, LANGUAGE, relativeTime, t } from '../i18n';
import type { Area, EntityInfo } from '../types';
import { ActionButton, ErrorLine, PanelHead, Show, useLoad, useSubmit, useTick } from '../ui';
import { HistoryPanel } from './history-panel';
import { ZigbeePanel } from './zigbee';

const TOGGLED = new Set(['switch', 'light', 'fan', 'siren']);
const SENSORS = new Set(['sensor', 'binary_sensor']);
/** Services that need data (a number, a position) are left to the agent and the CLI. */
const NEEDS_DATA = new Set(['set_percentage', 'set_position', 'set_value', 'set_temperature', 'volume_set', 'play_media']);

interface HomeData {
  areas: Area[];
  entities: EntityInfo[];
}

export function HomeView() {
  const home = useLoad<HomeData>(async (signal) => {
    const [areas, entities] = await Promise.all([api.get<Area[]>('/areas', {}, signal), api.get<EntityInfo[]>('/entities', {}, signal)]);
    return { areas, entities };
  }, []);
  const [chart, setChart] = useState<EntityInfo | undefined>(undefined);
  const [editing, setEditing] = useState<EntityInfo | undefined>(undefined);
  useTick(30_000);

  const replace = (entity: EntityInfo) =>
    home.set((data) => data && { ...data, entities: data.entities.map((e) => (e.entity_id === entity.entity_id ? entity : e)) });

  useEvent('entity.state_changed', (e) => {
    home.set(
      (data) =>
        data && {
          ...data,
          entities: data.entities.map((entity) =>
            entity.entity_id === e.entity_id
              ? {
                  ...entity,
                  state: e.new_state,
                  attributes: { ...entity.attributes, ...e.attributes },
                  last_updated: e.at,
                  ...(e.state_changed && { last_changed: e.at }),
                }
              : entity,
          ),
        },
    );
  });
  // Events were lost while away: the list may be stale (and entities may have come or gone).
  useEvent('reset', () => home.reload());

  return (
    <section class="home">
      <div class="toolbar">
        <button type="button" onClick={home.reload} disabled={home.loading}>
          {t('common.refresh')}
        </button>
      </div>
      <Show loaded={home}>
        {(data) =>
          data.entities.length === 0 ? (
            <p class="muted">{t('home.empty')}</p>
          ) : (
            groupByArea(data).map((group) => {
              const row = (entity: EntityInfo) => (
                <EntityRow key={entity.entity_id} entity={entity} onChanged={replace} onChart={setChart} onEdit={setEditing} />
              );
              const main = group.entities.filter((e) => isPrimaryEntity(e));
              const diagnostics = group.entities.filter((e) => !isPrimaryEntity(e));
              return (
                <div class="area" key={group.id}>
                  <h2>{group.name}</h2>
                  {main.length > 0 && <ul class="entities">{main.map(row)}</ul>}
                  {diagnostics.length > 0 && (
                    <details class="diagnostics">
                      <summary>{t('home.diagnostics', { count: diagnostics.length })}</summary>
                      <ul class="entities">{diagnostics.map(row)}</ul>
                    </details>
                  )}
                </div>
              );
            })
          )
        }
      </Show>
      <ZigbeePanel />
      {chart && <HistoryPanel entity={chart} onClose={() => setChart(undefined)} />}
      {editing && home.data && (
        <EditPanel
          entity={editing}
          areas={home.data.areas}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            // A new area, a moved entity: the groups change too.
            home.reload();
          }}
        />
      )}
    </section>
  );
}

interface AreaGroup {
  id: string;
  name: string;
  entities: EntityInfo[];
}

/** Areas in their configured order, entities by name inside; entities without an area last. */
function groupByArea({ areas, entities }: HomeData): AreaGroup[] {
  const groups = areas.map((a) => ({ id: a.id, name: a.name, entities: [] as EntityInfo[] }));
  const other: AreaGroup = { id: '', name: t('home.no_area'), entities: [] };
  for (const entity of entities) (groups.find((g) => g.id === entity.area) ?? other).entities.push(entity);
  for (const group of [...groups, other]) group.entities.sort((a, b) => a.name.localeCompare(b.name));
  return [...groups, other].filter((g) => g.entities.length > 0);
}

function stateText(entity: EntityInfo): string {
  if (typeof entity.state === 'number') {
    const value = formatNumber(entity.state);
    return entity.unit ? `${value} ${entity.unit}` : value;
  }
  return showStateIn(LANGUAGE, entity, entity.state, entity.unit);
}

function callService(entity: EntityInfo, service: string): Promise<EntityInfo> {
  return api.post<EntityInfo>(`/entities/${encodeURIComponent(entity.entity_id)}/services/${encodeURIComponent(service)}`, { data: {} });
}

function EntityRow({
  entity,
  onChanged,
  onChart,
  onEdit,
}: {
  entity: EntityInfo;
  onChanged: (entity: EntityInfo) => void;
  onChart: (entity: EntityInfo) => void;
  onEdit: (entity: EntityInfo) => void;
}) {
  const on = entity.state === 'on';
  const toggleService = entity.services.includes('toggle') ? 'toggle' : on ? 'turn_off' : 'turn_on';
  return (
    <li class="entity" data-entity={entity.entity_id} data-state={String(entity.state)}>
      <div class="entity-name">
        <span>
          {entity.name}{' '}
          <button
            type="button"
            class="link small edit-entity"
            aria-label={t('home.edit', { name: entity.name })}
            title={t('home.edit', { name: entity.name })}
            onClick={() => onEdit(entity)}
          >
            ✎
          </button>
        </span>
        <span class="muted small">{relativeTime(entity.last_changed)}</span>
      </div>
      {TOGGLED.has(entity.domain) && entity.services.includes(toggleService) ? (
        <ActionButton
          class={on ? 'switch on' : 'switch'}
          role="switch"
          aria-checked={on}
          aria-label={entity.name}
          action={async () => onChanged(await callService(entity, toggleService))}
        >
          {stateText(entity)}
        </ActionButton>
      ) : SENSORS.has(entity.domain) ? (
        <button type="button" class="value" onClick={() => onChart(entity)}>
          {stateText(entity)}
        </button>
      ) : (
        <span class="services">
          <span class="value">{stateText(entity)}</span>
          {entity.services
            .filter((s) => !NEEDS_DATA.has(s))
            .map((service) => (
              <ActionButton key={service} action={async () => onChanged(await callService(entity, service))}>
                {service.replace(/_/g, ' ')}
              </ActionButton>
            ))}
        </span>
      )}
    </li>
  );
}

/** The area choice: the driver's, none, one of the areas, or a new one typed in. */
const DRIVER_AREA = '\u0000driver';
const NO_AREA = '\u0000none';
const NEW_AREA = '\u0000new';

/** The owner's edit of an entity: name, area and aliases, saved as overrides over the driver's values. */
function EditPanel({ entity, areas, onClose, onSaved }: { entity: EntityInfo; areas: Area[]; onClose: () => void; onSaved: () => void }) {
  const own = entity.overrides ?? {};
  const [name, setName] = useState(entity.name);
  const [area, setArea] = useState('area' in own ? (own.area === null ? NO_AREA : (own.area ?? DRIVER_AREA)) : DRIVER_AREA);
  const [newArea, setNewArea] = useState('');
  const [aliases, setAliases] = useState(entity.aliases.join('\n'));
  const submit = useSubmit(async () => {
    const wantedArea = area === DRIVER_AREA ? undefined : area === NO_AREA ? null : area === NEW_AREA ? newArea.trim() : area;
    await api.patch<EntityInfo>(`/entities/${encodeURIComponent(entity.entity_id)}`, {
      // Empty: the device's own name again.
      name: name.trim() === '' ? null : name.trim(),
      ...(wantedArea === undefined ? { reset_area: true } : { area: wantedArea }),
      aliases: aliases
        .split('\n')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    });
    onSaved();
  });
  const title = t('home.edit_title', { name: entity.name });
  return (
    <div class="panel card edit-panel" role="dialog" aria-label={title}>
      <PanelHead title={title} onClose={onClose} />
      <form onSubmit={submit.onSubmit}>
        <label>
          {t('home.edit_name')}
          <input name="name" value={name} maxLength={128} placeholder={entity.name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        {'name' in own && (
          <button type="button" class="link small" onClick={() => setName('')}>
            {t('home.edit_reset_name')}
          </button>
        )}
        <label>
          {t('home.edit_area')}
          <select name="area" value={area} onChange={(e) => setArea(e.currentTarget.value)}>
            <option value={DRIVER_AREA}>{t('home.edit_driver_area')}</option>
            <option value={NO_AREA}>{t('home.edit_no_area')}</option>
            {areas.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
            <option value={NEW_AREA}>{t('home.edit_new_area')}</option>
          </select>
        </label>
        {area === NEW_AREA && (
          <label>
            {t('home.edit_new_area_name')}
            <input name="new_area" value={newArea} maxLength={128} required onInput={(e) => setNewArea(e.currentTarget.value)} />
          </label>
        )}
        <label>
          {t('home.edit_aliases')}
          <textarea name="aliases" rows={3} value={aliases} onInput={(e) => setAliases(e.currentTarget.value)} />
        </label>
        <p class="muted small">{t('home.edit_hint')}</p>
        <ErrorLine error={submit.error} />
        <button type="submit" disabled={submit.busy}>
          {t('common.save')}
        </button>
      </form>
    </div>
  );
}
