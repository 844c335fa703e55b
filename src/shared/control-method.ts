/**
 * What a kernel module below the plugin layer needs to offer control methods (`memory.*`,
 * `kb.*`): the register call of src/plugin/control-registry.ts, declared here so those modules do
 * not import upwards. ControlRegistry fits it.
 */
import type { Static, TSchema } from '@sinclair/typebox';

export interface ControlMethodRegistrar {
  register<P extends TSchema, R>(method: {
    name: string;
    description: string;
    params: P;
    owner_only?: boolean;
    handler(params: Static<P>, caller: { actor: string; owner?: boolean }): R | Promise<R>;
  }): unknown;
}
