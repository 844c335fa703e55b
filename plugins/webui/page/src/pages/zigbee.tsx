/**
 * The Zigbee network under the Home view (Zigbee2MQTT through the mqtt plugin, docs/mqtt.md
 * "Zigbee management"): the bridge, letting new devices join for a while, every device with its
 * availability, link quality and last report, renaming and removing one, and the groups with their
 * members. The panel is only there when the daemon has the feature (mqtt.zigbee_status exists);
 * a home without Zigbee sees nothing. Every change is the owner's and audited by the mqtt plugin;
 * removing a device (it must be paired again) and a group are asked first, and a device that does
 * not answer its removal (asleep, gone) can then be removed by force.
 */
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { duration, formatNumber, relativeTime, type StringKey, t } from '../i18n';
import type { Zigbee2MqttDeviceDiagnostics, ZigbeeGroup, ZigbeeManagementStatus } from '../types';
import { ActionButton, Show, useLoad, useTick } from '../ui';

/** What the owner may let devices join for, in seconds (Zigbee2MQTT's own limit is 254). */
const JOIN_SPANS = [60, 120, 254] as const;

/** The status, or null when this daemon has no Zigbee2MQTT feature. */
function loadStatus(signal: AbortSignal): Promise<ZigbeeManagementStatus | null> {
  return api.get<ZigbeeManagementStatus>('/zigbee', undefined, signal).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'HA_ERR_RPC_UNKNOWN_METHOD') return null;
    throw error;
  });
}

export function ZigbeePanel() {
  const status = useLoad(loadStatus, []);
  if (status.data === null) return null;
  return (
    <section class="card zigbee" data-testid="zigbee">
      <div class="panel-head">
        <h2>{t('zb.title')}</h2>
        <button type="button" onClick={status.reload} disabled={status.loading}>
          {t('common.refresh')}
        </button>
      </div>
      <Show loaded={status}>
        {(data) =>
          data && (
            <>
              <Bridge status={data} onChanged={status.reload} />
              <h3>{t('zb.devices', { count: data.devices.length })}</h3>
              {data.devices.length === 0 ? (
                <p class="muted small">{t('zb.no_devices')}</p>
              ) : (
                <ul class="entities zigbee-devices">
                  {data.devices.map((device) => (
                    <Device key={device.ieee_address} device={device} onChanged={status.reload} />
                  ))}
                </ul>
              )}
              <Groups groups={data.groups} devices={data.devices} onChanged={status.reload} />
            </>
          )
        }
      </Show>
    </section>
  );
}

function Bridge({ status, onChanged }: { status: ZigbeeManagementStatus; onChanged: () => void }) {
  const [span, setSpan] = useState<number>(JOIN_SPANS[0]);
  const join = status.permit_join;
  useTick(join.open ? 1000 : 60_000);
  const left = join.until === null ? join.remaining_s : Math.max(0, Math.round((Date.parse(join.until) - Date.now()) / 1000));
  const permit = async (seconds: number) => {
    await api.post('/zigbee/permit-join', { seconds });
    onChanged();
  };
  return (
    <div class="row wrap zigbee-bridge">
      <span>
        {t('zb.bridge')}{' '}
        <span class={`badge ${status.bridge === 'online' ? 'state-running' : 'warn'}`} data-testid="zb-bridge">
          {t(`zb.bridge.${status.bridge}` as StringKey)}
        </span>
      </span>
      {join.open ? (
        <>
          <span class="grow" data-testid="zb-join-open">
            {left === null || left <= 0 ? t('zb.join_open') : t('zb.join_open_for', { time: duration(left) })}
            {join.opened_by !== null && <span class="muted small"> · {t('zb.opened_by', { who: join.opened_by })}</span>}
          </span>
          <ActionButton data-testid="zb-join-close" action={() => permit(0)}>
            {t('zb.join_close')}
          </ActionButton>
        </>
      ) : (
        <>
          <span class="grow muted small">{t('zb.join_closed')}</span>
          <select aria-label={t('zb.join_for')} value={span} onChange={(e) => setSpan(Number(e.currentTarget.value))}>
            {JOIN_SPANS.map((seconds) => (
              <option key={seconds} value={seconds}>
                {duration(seconds)}
              </option>
            ))}
          </select>
          <ActionButton class="primary" data-testid="zb-join" disabled={status.bridge !== 'online'} action={() => permit(span)}>
            {t('zb.join')}
          </ActionButton>
        </>
      )}
    </div>
  );
}

function lastSeen(value: string | number | null): string {
  if (value === null) return t('zb.never_seen');
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return t('zb.last_seen', { time: Number.isFinite(ms) ? relativeTime(ms) : String(value) });
}

function Device({ device, onChanged }: { device: Zigbee2MqttDeviceDiagnostics; onChanged: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(device.friendly_name);
  const [unanswered, setUnanswered] = useState(false);
  const remove = async (force: boolean) => {
    try {
      await api.post('/zigbee/remove', { device: device.friendly_name, force });
    } catch (error) {
      // Z2M refuses a removal the device does not answer (asleep, out of range, gone): offer force.
      if (!force && error instanceof ApiError && error.code === 'HA_ERR_ZIGBEE_REQUEST') setUnanswered(true);
      throw error;
    }
    onChanged();
  };
  const rename = async () => {
    await api.post('/zigbee/rename', { from: device.friendly_name, to: name.trim() });
    setRenaming(false);
    onChanged();
  };
  return (
    <li class="entity zigbee-device" data-device={device.friendly_name}>
      <div class="grow">
        <strong>{device.friendly_name}</strong> {device.model !== null && <span class="muted small">{device.model}</span>}
        <div class="small">
          <span class={`badge ${device.availability === 'offline' ? 'warn' : device.availability === 'online' ? 'state-running' : ''}`}>
            {t(`zb.availability.${device.availability === 'not reported' ? 'unknown' : device.availability}` as StringKey)}
          </span>{' '}
          <span data-testid="zb-lqi">
            {device.linkquality === null ? t('zb.lqi_none') : t('zb.lqi', { value: formatNumber(device.linkquality) })}
          </span>
          {' · '}
          <span class="muted">{lastSeen(device.last_seen)}</span>
        </div>
      </div>
      {renaming ? (
        <form
          class="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
          }}
        >
          <input aria-label={t('zb.new_name')} value={name} maxLength={128} onInput={(e) => setName(e.currentTarget.value)} />
          <ActionButton
            class="primary"
            data-testid="zb-rename-save"
            disabled={name.trim() === '' || name.trim() === device.friendly_name}
            action={rename}
          >
            {t('common.save')}
          </ActionButton>
          <button type="button" onClick={() => setRenaming(false)}>
            {t('common.cancel')}
          </button>
        </form>
      ) : (
        <div class="buttons">
          <button type="button" data-testid="zb-rename" onClick={() => setRenaming(true)}>
            {t('zb.rename')}
          </button>
          <ActionButton
            class="danger"
            data-testid="zb-remove"
            confirm={t('zb.confirm_remove', { name: device.friendly_name })}
            action={() => remove(false)}
          >
            {t('zb.remove')}
          </ActionButton>
          {unanswered && (
            <ActionButton
              class="danger"
              data-testid="zb-remove-force"
              confirm={t('zb.confirm_force', { name: device.friendly_name })}
              action={() => remove(true)}
            >
              {t('zb.remove_force')}
            </ActionButton>
          )}
        </div>
      )}
    </li>
  );
}

function Groups({ groups, devices, onChanged }: { groups: ZigbeeGroup[]; devices: Zigbee2MqttDeviceDiagnostics[]; onChanged: () => void }) {
  const [name, setName] = useState('');
  const change = async (body: Record<string, unknown>) => {
    await api.post('/zigbee/groups', body);
    onChanged();
  };
  return (
    <>
      <h3>{t('zb.groups', { count: groups.length })}</h3>
      {groups.length === 0 && <p class="muted small">{t('zb.no_groups')}</p>}
      <ul class="entities zigbee-groups">
        {groups.map((group) => (
          <Group key={group.id} group={group} devices={devices} change={change} />
        ))}
      </ul>
      <div class="row wrap">
        <input
          aria-label={t('zb.group_name')}
          placeholder={t('zb.group_name')}
          value={name}
          maxLength={128}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <ActionButton
          data-testid="zb-group-add"
          disabled={name.trim() === ''}
          action={async () => {
            await change({ action: 'add', group: name.trim() });
            setName('');
          }}
        >
          {t('zb.group_add')}
        </ActionButton>
      </div>
    </>
  );
}

function Group({
  group,
  devices,
  change,
}: {
  group: ZigbeeGroup;
  devices: Zigbee2MqttDeviceDiagnostics[];
  change: (body: Record<string, unknown>) => Promise<void>;
}) {
  const memberName = (ieee: string) => devices.find((d) => d.ieee_address === ieee)?.friendly_name ?? ieee;
  const outside = devices.filter((d) => !group.members.some((m) => m.ieee_address === d.ieee_address));
  const [pick, setPick] = useState('');
  const chosen = outside.some((d) => d.friendly_name === pick) ? pick : (outside[0]?.friendly_name ?? '');
  return (
    <li class="entity zigbee-group" data-group={group.friendly_name}>
      <div class="grow">
        <strong>{group.friendly_name}</strong>
        <ul class="chips small">
          {group.members.length === 0 && <li class="muted">{t('zb.no_members')}</li>}
          {group.members.map((member) => (
            <li key={`${member.ieee_address}-${member.endpoint ?? ''}`} data-member={memberName(member.ieee_address)}>
              {memberName(member.ieee_address)}{' '}
              <ActionButton
                class="link"
                aria-label={t('zb.member_remove', { name: memberName(member.ieee_address) })}
                action={() => change({ action: 'members_remove', group: group.friendly_name, device: memberName(member.ieee_address) })}
              >
                ×
              </ActionButton>
            </li>
          ))}
        </ul>
      </div>
      <div class="buttons">
        {outside.length > 0 && (
          <>
            <select aria-label={t('zb.member_pick')} value={chosen} onChange={(e) => setPick(e.currentTarget.value)}>
              {outside.map((d) => (
                <option key={d.ieee_address} value={d.friendly_name}>
                  {d.friendly_name}
                </option>
              ))}
            </select>
            <ActionButton
              data-testid="zb-member-add"
              action={() => change({ action: 'members_add', group: group.friendly_name, device: chosen })}
            >
              {t('zb.member_add')}
            </ActionButton>
          </>
        )}
        <ActionButton
          class="danger"
          data-testid="zb-group-remove"
          confirm={t('zb.confirm_group_remove', { name: group.friendly_name })}
          action={() => change({ action: 'remove', group: group.friendly_name })}
        >
          {t('common.delete')}
        </ActionButton>
      </div>
    </li>
  );
}
