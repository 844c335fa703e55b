/**
 * The cfgmgr plugin over the real settings registry: a state database, a configuration file
 * holding secrets (the LLM key, a nested source key, the Home Assistant token), the kernel's own
 * config.* control methods (src/supervisor/kernel-methods.ts) on the test context's control
 * registry, and log lines captured so that a test reads the registry's audit records.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import cfgmgr from '../../../../plugins/cfgmgr/index.js';
import { BUILTIN_DEFINITIONS } from '../../../../src/config/definitions.js';
import { loadConfig } from '../../../../src/config/loader.js';
import { SettingsRegistry } from '../../../../src/config/settings-registry.js';
import { EventBus } from '../../../../src/events/event-bus.js';
import { systemClock } from '../../../../src/shared/clock.js';
import { type KernelMethodDeps, registerKernelMethods } from '../../../../src/supervisor/kernel-methods.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { type CapturedLogs, captureLogs, startStore, type Teardown, tempDir } from '../../fixtures/support.js';

export const LLM_KEY = 'sk-canary-llm-51c9';
export const SOURCE_KEY = 'sk-canary-source-7d20';
export const HA_TOKEN = 'ha-canary-token-3e88';
const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

export const CFGMGR_DEFAULTS = { max_list_items: 100, max_value_chars: 400, dangerous_keys: [] as string[] };

export interface CfgmgrRig {
  tc: TestPluginContext;
  settings: SettingsRegistry;
  captured: CapturedLogs;
  /** The audit records written so far (the registry's and the plugin's), parsed. */
  audits(): Array<Record<string, unknown>>;
}

export async function cfgmgrRig(
  t: Teardown,
  pluginSettings: Partial<typeof CFGMGR_DEFAULTS> = {},
  /** `debug` to capture every line a secret could leak into. */
  logLevel: 'info' | 'debug' = 'info',
): Promise<CfgmgrRig> {
  const data = tempDir(t, 'ha-cfgmgr-');
  const config = join(data, 'config.yaml');
  writeFileSync(
    config,
    [
      'core:',
      '  llm:',
      `    api_key: ${LLM_KEY}`,
      '    sources:',
      '      backup:',
      '        adapter: openai',
      '        base_url: http://127.0.0.1:9/v1',
      `        api_key: ${SOURCE_KEY}`,
      '        model: small',
      'plugin:',
      '  homeassistant:',
      `    token: ${HA_TOKEN}`,
      '',
    ].join('\n'),
  );
  const captured = captureLogs(logLevel);
  const { store } = await startStore(t, data, { logs: captured.logs });
  const settings = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded: loadConfig({ file: config, env: {}, systemFile: NO_SYSTEM }),
    events: new EventBus(captured.logs.child('events')),
    logs: captured.logs,
    clock: systemClock,
  });
  await settings.start();
  t.teardown(() => settings.stop());

  const tc = createTestPluginContext({ name: 'cfgmgr', dataDir: data, settings: { ...CFGMGR_DEFAULTS, ...pluginSettings } });
  t.teardown(() => tc.close());
  // The kernel's real config.* methods; the rest of what registerKernelMethods registers is never called here.
  registerKernelMethods({ control: tc.control, settings, logs: captured.logs } as unknown as KernelMethodDeps);
  const plugin = cfgmgr.create(tc.context);
  await plugin.start(new AbortController().signal);
  t.teardown(() => plugin.stop());
  return {
    tc,
    settings,
    captured,
    audits: () => [
      ...captured.records().filter((record) => record.audit === true),
      ...tc.audits.map((entry) => ({ action: entry.action, ...entry.details })),
    ],
  };
}
