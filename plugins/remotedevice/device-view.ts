/**
 * How a device is shown to the model, the CLI and the web API: what the owner registered, and,
 * while it is connected, what it offered and how it is doing. The texts a device sent about itself
 * (client, platform) were cleaned when the hello was read; the name is the owner's.
 */

import type { DeviceSession } from './device-session.js';
import type { RegisteredDevice } from './device-store.js';
import { capabilityNames, type DeviceCapability } from './protocol.js';

export interface DeviceView {
  id: string;
  name: string;
  online: boolean;
  entity_id: string;
  /** The output channel while online (`output_send__device_<id>`). */
  channel: string;
  /** What the owner granted. */
  granted: DeviceCapability[];
  /** What the device offered in its hello (online only). */
  offered?: DeviceCapability[];
  /** What may be asked of it now: granted and offered. */
  capabilities: DeviceCapability[];
  /** The same as a mask of DEVICE_CAPABILITY bits. */
  capability_bits: number;
  client?: string;
  platform?: string;
  remote?: string;
  online_since?: string;
  last_seen?: string;
  pending?: number;
  /** Why it went offline the last time. */
  last_offline?: { code: string; message: string; at: string };
  created_at: string;
}

export const channelName = (id: string) => `device_${id}`;
export const entityObjectId = (id: string) => `device_${id}`;

export function deviceView(
  device: RegisteredDevice,
  session: DeviceSession | undefined,
  lastOffline: { code: string; message: string; at: number } | undefined,
): DeviceView {
  const online = session?.open === true;
  const usable = online ? session.capabilities : 0;
  return {
    id: device.id,
    name: device.name,
    online,
    entity_id: `binary_sensor.${entityObjectId(device.id)}`,
    channel: channelName(device.id),
    granted: capabilityNames(device.capabilities),
    ...(online && { offered: capabilityNames(session.info.offered) }),
    capabilities: capabilityNames(usable),
    capability_bits: usable,
    ...(online && {
      client: session.info.client,
      platform: session.info.platform,
      remote: session.info.remote,
      online_since: new Date(session.info.bound_at).toISOString(),
      last_seen: new Date(session.lastSeen).toISOString(),
      pending: session.pending,
    }),
    ...(lastOffline && {
      last_offline: { code: lastOffline.code, message: lastOffline.message, at: new Date(lastOffline.at).toISOString() },
    }),
    created_at: new Date(device.created_at).toISOString(),
  };
}
