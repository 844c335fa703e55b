/**
 * The settings of the gpio device driver, `plugin.gpio.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<GpioSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta, SLUG } from '../../src/sdk/settings.js';

const GpioPinSchema = Type.Object(
  {
    id: Type.String({ pattern: SLUG, description: 'Pin id; its entity is <domain>.<id> (switch.kitchen_light).' }),
    name: Type.String({ default: '', maxLength: 64, description: 'Friendly name ("Kitchen light"); empty: the id with spaces.' }),
    aliases: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [], maxItems: 16 }),
    area: Type.String({ default: '', maxLength: 64, description: 'Area id or name; empty: none.' }),
    bcm: Type.Integer({ minimum: 0, maximum: 57, description: 'BCM (Broadcom) GPIO number, as printed on pinout diagrams (GPIO17 = 17).' }),
    direction: Type.Union([Type.Literal('in'), Type.Literal('out')]),
    domain: Type.String({
      default: '',
      maxLength: 32,
      description:
        'Entity domain: outputs switch (default), light, fan, siren, valve, lock; inputs binary_sensor (default) or button. Empty: the default.',
    }),
    device_class: Type.String({ default: '', maxLength: 32, description: 'Home Assistant device class (door, motion, outlet, ...).' }),
    active_low: Type.Boolean({ default: false, description: 'Logical 1 (on, pressed) is a low level on the wire.' }),
    edge: Type.Union([Type.Literal('none'), Type.Literal('rising'), Type.Literal('falling'), Type.Literal('both')], {
      default: 'both',
      description: 'Inputs: which edges are watched.',
    }),
    debounce_ms: Type.Integer({ default: 20, minimum: 0, maximum: 5000, description: 'Inputs: a level must hold this long to count.' }),
    bias: Type.Union([Type.Literal('as_is'), Type.Literal('pull_up'), Type.Literal('pull_down'), Type.Literal('disable')], {
      default: 'as_is',
      description: 'Inputs: pull resistor (libgpiod back end only; sysfs leaves it as the device tree set it).',
    }),
    initial: Type.Union([Type.Literal(0), Type.Literal(1), Type.Null()], {
      default: null,
      description: 'Outputs: logical value after start; null: the safe value.',
    }),
    safe: Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal('keep')], {
      default: 0,
      description: 'Outputs: logical value whenever HomeAgent is not in control (start, stop, crash); keep: leave it.',
    }),
    pulse_ms: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 60000,
      description: 'Outputs: a momentary relay: turn_on pulses this long. 0: a normal output.',
    }),
    max_on_time_s: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 86400,
      description: 'Outputs: turned off after this long on, whoever turned it on (a pump). 0: no limit.',
    }),
    input_edges: Type.Union([Type.Literal('none'), Type.Literal('rising'), Type.Literal('falling'), Type.Literal('both')], {
      default: 'none',
      description:
        'Inputs: edges that also become an input for the agent, a full model turn each (rising = becomes active: a press). none: edges only change the entity and trigger automations.',
    }),
    level: Type.Integer({
      default: 1,
      minimum: 0,
      maximum: 4,
      description:
        'Interrupt level of those inputs (with input_edges): 0 queued, 1 background, 2 message, 3 interactive (a doorbell), 4 critical.',
    }),
    input_text: Type.String({
      default: '',
      maxLength: 500,
      description:
        'Text of that input (with input_edges); {name}, {edge} and {state} are filled in. Empty: "<name> became <on|off> (GPIO edge)".',
    }),
  },
  { additionalProperties: false },
);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('gpio'),
    backend: Type.Union([Type.Literal('auto'), Type.Literal('sysfs'), Type.Literal('gpiod'), Type.Literal('simulated')], {
      default: 'auto',
      ...pluginMeta(
        'gpio',
        'auto: sysfs when /sys/class/gpio has the Raspberry Pi chip, else the libgpiod tools, else a simulation (said in the status). The others fail loudly when missing.',
        {
          description_zh:
            'auto：/sys/class/gpio 里有树莓派的芯片时用 sysfs，否则用 libgpiod 工具，再不行就用模拟（状态里会说明）。其他选项在缺少对应后端时直接报错。',
          requires_restart: true,
        },
      ),
    }),
    chip: Type.String({
      default: '',
      maxLength: 64,
      ...pluginMeta('gpio', 'GPIO chip label or gpiochipN; empty: the Raspberry Pi header chip found by its label.', {
        description_zh: 'GPIO 芯片标签或 gpiochipN；留空：按标签找到的树莓派排针芯片。',
        requires_restart: true,
      }),
    }),
    poll_interval_ms: Type.Integer({
      default: 10,
      minimum: 1,
      maximum: 1000,
      ...pluginMeta(
        'gpio',
        "sysfs inputs whose edges do not come from onoff's epoll (onoff missing or switched off, or epoll refused): how often values are read to find edges.",
        {
          description_zh: '边沿不来自 onoff 的 epoll 的 sysfs 输入（没有 onoff、被关掉或 epoll 被拒绝）：多久读一次值来发现边沿。',
          requires_restart: true,
        },
      ),
    }),
    pins: Type.Array(GpioPinSchema, {
      default: [],
      maxItems: 58,
      ...pluginMeta(
        'gpio',
        'Pins in use, each {id, name, area, bcm, direction, ...}; every pin becomes an entity. See devices/gpio/README.md.',
        {
          description_zh: '使用中的引脚，每个为 {id, name, area, bcm, direction, ...}；每个引脚都成为一个实体。见 devices/gpio/README.md。',
          requires_restart: true,
        },
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type GpioSettings = Static<typeof settingsSchema>;
