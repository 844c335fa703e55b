/**
 * The remotedevice plugin's control methods, behind `homeagentctl devices`: `remotedevice.list`
 * (anyone who may call control methods), and `remotedevice.add`, `.rotate` and `.revoke` (owner
 * callers only: they make or end the credentials that let a machine act for the house). `add` and
 * `rotate` answer the device's token: the one time it is shown.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { ControlMethod } from '../../src/sdk/index.js';
import { DEVICE_CAPABILITIES } from './protocol.js';

export interface DeviceMethodHandlers {
  list(): unknown;
  add(params: { id: string; name?: string; capabilities?: string[] }, actor: string): unknown;
  rotate(id: string, actor: string): unknown;
  revoke(id: string, actor: string): unknown;
}

const ID = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,24}$',
  description: 'The device id: lower-case letters, digits and _, 25 characters at most.',
});

const method = <P extends TSchema>(m: ControlMethod<P>): ControlMethod => m as unknown as ControlMethod;

export function deviceMethods(handlers: DeviceMethodHandlers): ControlMethod[] {
  return [
    method({
      name: 'remotedevice.list',
      description: 'The companion devices with their state and capabilities, and the gateway address.',
      params: Type.Object({}, { additionalProperties: false }),
      handler: () => handlers.list(),
    }),
    method({
      name: 'remotedevice.add',
      description: 'Registers a companion device and answers its token, shown this once (owner only).',
      params: Type.Object(
        {
          id: ID,
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          capabilities: Type.Optional(Type.Array(Type.Union(DEVICE_CAPABILITIES.map((c) => Type.Literal(c))), { maxItems: 16 })),
        },
        { additionalProperties: false },
      ),
      owner_only: true,
      handler: (params, caller) => handlers.add(params, caller.actor),
    }),
    method({
      name: 'remotedevice.rotate',
      description: "Replaces a device's token and answers the new one, shown this once; the old one stops working (owner only).",
      params: Type.Object({ id: ID }, { additionalProperties: false }),
      owner_only: true,
      handler: (params, caller) => handlers.rotate(params.id, caller.actor),
    }),
    method({
      name: 'remotedevice.revoke',
      description: 'Removes a companion device; a connected one is disconnected at once (owner only).',
      params: Type.Object({ id: ID }, { additionalProperties: false }),
      owner_only: true,
      handler: (params, caller) => handlers.revoke(params.id, caller.actor),
    }),
  ];
}
