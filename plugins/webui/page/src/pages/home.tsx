/**
 * The home's devices by area, with their state kept live from entity.state_changed events:
 * switches, lights and fans get a toggle, sensors show value and unit and open their history
 * chart, other devices offer their data-less services (open, close, lock, press, ...).
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useEvent } from '../events';
import { relativeTime, t } from '../i18n';
import type { Area, EntityInfo } from '../types';
import { ActionButton, Show, useLoad, useTick } from '../ui';
import { HistoryPanel } from './history-panel';

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
            groupByArea(data).map((group) => (
              <div class="area" key={group.id}>
                <h2>{group.name}</h2>
                <ul class="entities">
                  {group.entities.map((entity) => (
                    <EntityRow key={entity.entity_id} entity={entity} onChanged={replace} onChart={setChart} />
                  ))}
                </ul>
              </div>
            ))
          )
        }
      </Show>
      {chart && <HistoryPanel entity={chart} onClose={() => setChart(undefined)} />}
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
  if (entity.state === null) return t('home.unknown');
  if (entity.state === 'on') return t('home.on');
  if (entity.state === 'off') return t('home.off');
  return entity.unit ? `${entity.state} ${entity.unit}` : String(entity.state);
}

function callService(entity: EntityInfo, service: string): Promise<EntityInfo> {
  return api.post<EntityInfo>(`/entities/${encodeURIComponent(entity.entity_id)}/services/${encodeURIComponent(service)}`, { data: {} });
}

function EntityRow({
  entity,
  onChanged,
  onChart,
}: {
  entity: EntityInfo;
  onChanged: (entity: EntityInfo) => void;
  onChart: (entity: EntityInfo) => void;
}) {
  const on = entity.state === 'on';
  const toggleService = entity.services.includes('toggle') ? 'toggle' : on ? 'turn_off' : 'turn_on';
  return (
    <li class="entity" data-entity={entity.entity_id} data-state={String(entity.state)}>
      <div class="entity-name">
        <span>{entity.name}</span>
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
