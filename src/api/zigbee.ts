/**
 * The wire shapes of the mqtt plugin's Zigbee2MQTT control methods (mqtt.zigbee_status and
 * mqtt.zigbee_permit_join; the zigbee_devices tool answers the same status), as
 * `homeagentctl zigbee` reads them.
 */

/** `bridge/state` as last heard; `unknown` before it was. */
export type ZigbeeBridgeState = 'online' | 'offline' | 'unknown';

export interface Zigbee2MqttDeviceDiagnostics {
  friendly_name: string;
  ieee_address: string;
  model: string | null;
  /** online / offline as Z2M's availability says (offline too while the bridge is); `not reported` without the feature. */
  availability: 'online' | 'offline' | 'not reported';
  /** 0-255, higher is better; null until the device reported one. */
  linkquality: number | null;
  last_seen: string | number | null;
  entities: string[];
}

export interface ZigbeeGroup {
  id: number;
  friendly_name: string;
  members: Array<{ ieee_address: string; endpoint: number | null }>;
}

/** Whether joining is open: part of mqtt.zigbee_status, and what mqtt.zigbee_permit_join answers. */
export interface PermitJoinState {
  open: boolean;
  /** ISO time joining closes (Z2M closes it itself), or null when closed or unknown. */
  until: string | null;
  remaining_s: number | null;
  /** Who opened it through HomeAgent, when HomeAgent did. */
  opened_by: string | null;
}

export interface ZigbeeManagementStatus {
  bridge: ZigbeeBridgeState;
  permit_join: PermitJoinState;
  devices: Zigbee2MqttDeviceDiagnostics[];
  groups: ZigbeeGroup[];
}
