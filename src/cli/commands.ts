/**
 * The catalogue of homeagentctl's command modules: a new command is one line here (issue 28).
 * homeagentctl takes its parseArgs options, its help, the refusal of another command's flag and
 * its dispatch from these lists. There are three because the help shows each command beside the
 * built-in ones it belongs with; each list is in help order.
 */
import { automationsCommand } from './automations.js';
import { changesCommand } from './changes.js';
import type { CataloguedCommand } from './command-module.js';
import { confirmCommand } from './confirm.js';
import { devicesCommand } from './devices.js';
import { entitiesCommand, sensorsCommand } from './entities.js';
import { gpioCommand } from './gpio.js';
import { homeassistantCommand } from './homeassistant.js';
import { i2cCommand } from './i2c.js';
import { listsCommand } from './lists.js';
import { mqttCommand } from './mqtt.js';
import { sequencesCommand } from './sequences.js';
import { voiceCommand } from './voice.js';
import { webuiCommand } from './webui.js';
import { zigbeeCommand } from './zigbee.js';

/** Shown after status and health: what the daemon itself did. */
export const DAEMON_COMMANDS: readonly CataloguedCommand[] = [changesCommand];

/** Shown after memory and kb: the home's devices, connections and lists. */
export const HOME_COMMANDS: readonly CataloguedCommand[] = [
  entitiesCommand,
  sensorsCommand,
  automationsCommand,
  gpioCommand,
  i2cCommand,
  mqttCommand,
  zigbeeCommand,
  homeassistantCommand,
  webuiCommand,
  devicesCommand,
  listsCommand,
  voiceCommand,
];

/** Shown after chat: what the agent waits for. */
export const AGENT_COMMANDS: readonly CataloguedCommand[] = [confirmCommand, sequencesCommand];

export const ALL_COMMANDS: readonly CataloguedCommand[] = [...DAEMON_COMMANDS, ...HOME_COMMANDS, ...AGENT_COMMANDS];
