/**
 * gpio_read, gpio_write and gpio_pulse: the pins themselves, for wiring checks and for pins the
 * model wants by number. Everyday switching goes through the entities (entity_call), which also
 * speak the domain's words (lock/unlock) and ask the owner before moving a critical device.
 *
 * Writes go straight to the safety layer, not through the entity registry: a pin write is a raw
 * logical level, which the domain's services cannot always express (a momentary relay offers no
 * turn_off). The plugin reports the new level to the entity at once, so the registry still sees
 * every change. Pins of critical entities (lock, valve, siren) are refused here, otherwise this
 * would be a way round the owner's confirmation.
 */
import { isHomeAgentError, type ToolContext, type ToolDefinition, ToolError } from '../../src/sdk/index.js';
import type { GpioValue } from './gpio-backend.js';
import type { GpioOperations, LivePin, OperationActor } from './gpio-operations.js';
import { MAX_PULSE_MS } from './pin-guard.js';

export interface GpioToolArgs {
  pin: string | number;
  value?: GpioValue;
  ms?: number;
}

type GpioTool = Omit<ToolDefinition<GpioToolArgs>, 'owner'>;

const PIN_PARAMETER = {
  type: ['string', 'integer'],
  description: 'The pin: its id (kitchen_light), its entity id (switch.kitchen_light) or its BCM number (17).',
};
/** A pulse may take MAX_PULSE_MS; the call must not time out before it ends. */
const PULSE_TIMEOUT_MS = MAX_PULSE_MS + 10_000;

function pinOf(ops: GpioOperations, reference: string | number): LivePin {
  const pin = ops.find(reference);
  if (pin !== undefined) return pin;
  throw new ToolError({
    reason: 'not_found',
    field: 'pin',
    detail: `no GPIO pin ${JSON.stringify(reference)}; the pins are: ${ops.describePins()}`,
    hint: 'give one of those pin ids, its entity id or its BCM number',
  });
}

function writable(pin: LivePin): void {
  const plan = pin.plan;
  if (plan.direction !== 'out') {
    throw new ToolError({
      reason: 'rejected',
      field: 'pin',
      detail: `pin ${plan.id} (GPIO${plan.bcm}) is an input (direction in): it can be read, not written`,
      hint: 'gpio_read tells its level',
    });
  }
  if (plan.critical) {
    throw new ToolError({
      reason: 'confirmation_required',
      field: 'pin',
      detail: `pin ${plan.id} drives the ${plan.domain} ${plan.entity_id}: switching it needs the owner's confirmation`,
      hint: `use the entity tools on ${plan.entity_id}; they ask the owner first`,
    });
  }
}

/** GPIO failures as the model reads them; anything else stays an exception (a bug, reported as such). */
async function asTool<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isHomeAgentError(error, 'HA_ERR_GPIO_UNAVAILABLE')) throw new ToolError({ reason: 'unavailable', detail: error.message });
    if (isHomeAgentError(error, 'HA_ERR_GPIO_IO')) {
      throw new ToolError({ reason: 'failed', detail: error.message, hint: 'check the wiring; `homeagentctl health` shows pin errors' });
    }
    if (isHomeAgentError(error, 'HA_ERR_GPIO_DIRECTION') || isHomeAgentError(error, 'HA_ERR_GPIO_CONFIG')) {
      throw new ToolError({ reason: 'rejected', detail: error.message });
    }
    throw error;
  }
}

function agent(context: ToolContext): OperationActor {
  return { actor: 'agent', details: { task_id: context.task_id, source: context.source, channel: context.channel } };
}

export function gpioTools(ops: GpioOperations): GpioTool[] {
  const pins = ops.describePins();
  return [
    {
      name: 'gpio_read',
      tier: 'read',
      parallel_safe: true,
      description: `Reads the logical level (0/1, active_low applied) of a configured GPIO pin. Pins: ${pins}.`,
      parameters: { type: 'object', properties: { pin: PIN_PARAMETER }, required: ['pin'], additionalProperties: false },
      execute: (args) =>
        asTool(async () => {
          const pin = pinOf(ops, args.pin);
          const value = await ops.read(pin);
          const status = ops.status(pin);
          return {
            pin: pin.plan.id,
            bcm: pin.plan.bcm,
            direction: pin.plan.direction,
            value,
            state: status.state,
            entity_id: pin.plan.entity_id,
          };
        }),
    },
    {
      name: 'gpio_write',
      tier: 'act',
      description:
        'Sets a GPIO output to a logical level (1 on, 0 off). A momentary relay (pulse_ms) is pulsed by 1. ' +
        `Locks, valves and sirens are switched through their entity instead. Pins: ${pins}.`,
      parameters: {
        type: 'object',
        properties: { pin: PIN_PARAMETER, value: { type: 'integer', enum: [0, 1], description: 'The logical level: 1 on, 0 off.' } },
        required: ['pin', 'value'],
        additionalProperties: false,
      },
      execute: (args, context) =>
        asTool(async () => {
          const pin = pinOf(ops, args.pin);
          writable(pin);
          const value = args.value as GpioValue;
          const result = await ops.write(pin, value, agent(context));
          return { pin: pin.plan.id, value, state: ops.status(pin).state, entity_id: pin.plan.entity_id, ...result };
        }),
    },
    {
      name: 'gpio_pulse',
      tier: 'act',
      timeout_ms: PULSE_TIMEOUT_MS,
      description:
        `Switches a GPIO output on for ms milliseconds (at most ${MAX_PULSE_MS}), then off again; answers when the pulse has ended. ` +
        `Without ms the pin's pulse_ms is used. Pins: ${pins}.`,
      parameters: {
        type: 'object',
        properties: {
          pin: PIN_PARAMETER,
          ms: { type: 'integer', minimum: 1, maximum: MAX_PULSE_MS, description: "Pulse length in ms; default the pin's pulse_ms." },
        },
        required: ['pin'],
        additionalProperties: false,
      },
      execute: (args, context) =>
        asTool(async () => {
          const pin = pinOf(ops, args.pin);
          writable(pin);
          if (args.ms === undefined && pin.plan.pulse_ms === 0) {
            throw new ToolError({
              reason: 'required',
              field: 'ms',
              detail: `pin ${pin.plan.id} has no pulse_ms configured`,
              hint: 'give ms',
            });
          }
          const ms = await ops.pulse(pin, args.ms, agent(context));
          return { pin: pin.plan.id, pulsed_ms: ms, state: ops.status(pin).state, entity_id: pin.plan.entity_id };
        }),
    },
  ];
}
