/**
 * The GPIO control methods behind `homeagentctl gpio`: gpio.pins, gpio.read, gpio.write and
 * gpio.simulate. They are the owner's own hands on the pins (the CLI socket is the machine's
 * admin), so unlike the model's tools they may switch critical outputs; every change is audited
 * with the caller as actor.
 */
import { Type } from '@sinclair/typebox';
import type { GpioPinStatus, GpioPinsResult, GpioSimulateResult, GpioWriteResult } from '../../src/sdk/api.js';
import { HomeAgentError, type PluginControl } from '../../src/sdk/index.js';
import type { GpioOperations, LivePin } from './gpio-operations.js';

/** Shortest simulated press: the simulator's contact bounce (3 × 1 ms each way) must fit inside it. */
export const MIN_PRESS_MS = 10;
export const MAX_PRESS_MS = 60_000;

const PinParam = Type.String({ minLength: 1, maxLength: 128, description: 'Pin id, entity id or BCM number.' });
const Bit = Type.Union([Type.Literal(0), Type.Literal(1)]);

function pinOf(ops: GpioOperations, reference: string): LivePin {
  const pin = ops.find(reference);
  if (pin !== undefined) return pin;
  throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `no GPIO pin ${JSON.stringify(reference)}; the pins are: ${ops.describePins()}`, {
    details: { pin: reference },
  });
}

/** Registers the methods and returns their unregister functions; if one cannot be registered, none stays registered. */
export function registerGpioMethods(control: Pick<PluginControl, 'register'>, ops: GpioOperations): Array<() => void> {
  const undo: Array<() => void> = [];
  try {
    registerAll(control, ops, undo);
  } catch (error) {
    for (const remove of undo) remove();
    throw error;
  }
  return undo;
}

function registerAll(control: Pick<PluginControl, 'register'>, ops: GpioOperations, undo: Array<() => void>): void {
  undo.push(
    control.register({
      name: 'gpio.pins',
      description: 'The configured GPIO pins with their levels and entities, and the back end with the reason it was chosen.',
      params: Type.Object({}, { additionalProperties: false }),
      handler: (): GpioPinsResult => ({ backend: ops.backend(), pins: ops.pins() }),
    }),
  );
  undo.push(
    control.register({
      name: 'gpio.read',
      description: 'Reads one pin (logical level, active_low applied).',
      params: Type.Object({ pin: PinParam }, { additionalProperties: false }),
      handler: async (params): Promise<GpioPinStatus> => {
        const pin = pinOf(ops, params.pin);
        await ops.read(pin);
        return ops.status(pin);
      },
    }),
  );
  undo.push(
    control.register({
      name: 'gpio.write',
      description: 'Sets an output to a logical level (a momentary relay is pulsed by 1); audited.',
      params: Type.Object({ pin: PinParam, value: Bit }, { additionalProperties: false }),
      handler: async (params, caller): Promise<GpioWriteResult> => {
        const pin = pinOf(ops, params.pin);
        const result = await ops.write(pin, params.value, { actor: caller.actor });
        return { ...ops.status(pin), ...result };
      },
    }),
  );
  undo.push(
    control.register({
      name: 'gpio.simulate',
      description: 'Simulated back end only: drives an input to a logical level, or presses it (with contact bounce) for press_ms.',
      params: Type.Object(
        {
          pin: PinParam,
          level: Type.Optional(Bit),
          press_ms: Type.Optional(Type.Integer({ minimum: MIN_PRESS_MS, maximum: MAX_PRESS_MS })),
        },
        { additionalProperties: false },
      ),
      handler: (params, caller): GpioSimulateResult => {
        const pin = pinOf(ops, params.pin);
        if (params.level !== undefined && params.press_ms === undefined) {
          ops.simulate(pin, { level: params.level }, { actor: caller.actor });
          return { pin: pin.plan.id, level: params.level, status: ops.status(pin) };
        }
        if (params.press_ms !== undefined && params.level === undefined) {
          ops.simulate(pin, { press_ms: params.press_ms }, { actor: caller.actor });
          return { pin: pin.plan.id, press_ms: params.press_ms, status: ops.status(pin) };
        }
        throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'gpio.simulate: give either level (0 or 1) or press_ms, not both or neither');
      },
    }),
  );
}
