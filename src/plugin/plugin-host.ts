/**
 * The plugin host: discovery, lifecycle, enable/disable, hot reload, install and health for every
 * plugin kind. Built-in plugins (shipped in plugins/), installed ones (<data>/plugins) and skills
 * (skills/ and <data>/skills) are found the same way, validated before any code loads, and driven
 * through the same lifecycle by their kind's runtime. A plugin that fails to load, to start, or
 * keeps crashing is quarantined with its reason; nothing a plugin does is fatal to the daemon.
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PluginOrigin, PluginState, PluginStatus } from '../api/plugins.js';
import type { Logger } from '../log/logger.js';
import { isPluginModule, type PluginHealth, type PluginTrust } from '../sdk/plugin.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ManagedDatabase } from '../store/database.js';
import type { RefreshResult } from '../tracker/change-types.js';
import { checkEngine, type Manifest, type Permissions, type PluginKind, readManifest } from './manifest.js';
import { convertOpenClawPackage, isOpenClawPackage } from './openclaw/openclaw-package.js';
import { type KernelServices, PluginGeneration } from './plugin-generation.js';
import { type InstalledArchive, installArchive, removeInstalled } from './plugin-installer.js';
import { checkPluginSection, defineManifestSettings, unusedSectionWarning } from './plugin-settings.js';
import { PluginStateStore } from './plugin-state-store.js';
import type { PluginRuntime, PluginsLimits, ReportedState, RuntimeContext } from './runtime.js';

export type { PluginOrigin, PluginState, PluginStatus };

/** A folder of plugins and what may load from it. */
export interface PluginRoot {
  dir: string;
  origin: PluginOrigin;
  /** Folders here without plugin.json but with SKILL.md are skills. */
  skills: boolean;
}

export interface PluginHostOptions {
  /** Searched in order; a name found again later is refused. */
  roots: PluginRoot[];
  /** Where `plugins install` unpacks archives (one of the roots). */
  installDir: string;
  /** `<data>/plugin-data`: one private folder per plugin. */
  pluginDataDir: string;
  dataDir: string;
  runtimeDir: string;
  database: () => ManagedDatabase;
  kernel: KernelServices;
  /** Runtimes of the non-built-in kinds (process, lua, skill). */
  runtimes: Partial<Record<Exclude<PluginKind, 'builtin'>, PluginRuntime>>;
  /** Reads the manifest of a skill folder without plugin.json. */
  skillManifest?: (dir: string) => Manifest;
  limits: () => PluginsLimits;
  /** core.daemon.plugin_timeout_ms. */
  timeoutMs: () => number;
  /** plugin.<name>.enabled from the configuration (undefined when not set). */
  configuredEnabled: (name: string) => boolean | undefined;
  /**
   * The configuration file's sections `plugin.<name>` of plugins the schema does not know
   * (LoadedConfig.pluginSections), checked against each plugin's manifest: at start all at once
   * (a problem refuses the start with HA_ERR_CONFIG_INVALID, which the daemon exits 78 on), later
   * before the plugin is installed, reloaded or refreshed (a problem keeps it from starting).
   */
  configSections?: { file: string; sections: ReadonlyMap<string, Readonly<Record<string, unknown>>> };
}

interface PluginRecord {
  name: string;
  dir: string;
  origin: PluginOrigin;
  trust: PluginTrust;
  manifest: Manifest;
  state: PluginState;
  error?: string;
  current?: PluginGeneration;
  /** When its process last crashed or failed (epoch ms), for the supervisor's trial decisions. */
  crashedAt?: number;
}

export class PluginHost implements Service {
  readonly name = 'plugins';
  readonly #options: PluginHostOptions;
  readonly #log: Logger;
  readonly #records = new Map<string, PluginRecord>();
  /** Folders that could not be loaded at all (bad manifest, name clash), for `plugins list`. */
  readonly #rejected = new Map<string, string>();
  readonly #state: PluginStateStore;
  /** One lifecycle change per plugin at a time (reload, enable, disable, install). */
  readonly #locks = new Map<string, Promise<unknown>>();
  #signal: AbortSignal = new AbortController().signal;

  constructor(options: PluginHostOptions) {
    this.#options = options;
    this.#log = options.kernel.logs.child('plugins');
    this.#state = new PluginStateStore(options.database);
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    this.#state.open();
    const found = this.#discover();
    this.#checkConfigSections(found);
    for (const record of found) {
      if (signal.aborted) break;
      this.#records.set(record.name, record);
      if (this.#enabled(record.name)) await this.#startRecord(record);
      else this.#setState(record, 'disabled');
    }
  }

  async stop(): Promise<void> {
    for (const record of [...this.#records.values()].reverse()) await this.#stopRecord(record, 'stopped');
  }

  list(): PluginStatus[] {
    const out: PluginStatus[] = [...this.#records.values()].map((r) => ({
      name: r.name,
      version: r.manifest.version,
      description: r.manifest.description,
      kind: r.manifest.kind,
      origin: r.origin,
      state: r.state,
      enabled: this.#enabled(r.name),
      ...(r.error === undefined ? {} : { error: r.error }),
      tools: r.current?.toolNames() ?? [],
      dir: r.dir,
    }));
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Folders that were refused before loading, with the reason. */
  rejected(): Array<{ dir: string; error: string }> {
    return [...this.#rejected].map(([dir, error]) => ({ dir, error }));
  }

  /** What a plugin's manifest grants (gpio_pins and mqtt_topics are reserved and grant nothing yet). */
  permissions(name: string): Permissions | undefined {
    return this.#records.get(name)?.manifest.permissions;
  }

  async enable(name: string, actor: string): Promise<PluginStatus> {
    return this.#exclusive(name, async () => {
      const record = this.#require(name);
      this.#state.set(name, true, actor, new Date(this.#options.kernel.now()).toISOString());
      this.#options.kernel.logs.audit({ actor, action: 'plugins.enable', plugin: name });
      if (record.state !== 'running' && record.state !== 'restarting') await this.#startRecord(record);
      return this.#status(name);
    });
  }

  async disable(name: string, actor: string): Promise<PluginStatus> {
    return this.#exclusive(name, async () => {
      const record = this.#require(name);
      this.#state.set(name, false, actor, new Date(this.#options.kernel.now()).toISOString());
      this.#options.kernel.logs.audit({ actor, action: 'plugins.disable', plugin: name });
      await this.#stopRecord(record, 'disabled');
      return this.#status(name);
    });
  }

  /**
   * Hot reload: reads the manifest again, starts a new instance with its registrations staged,
   * swaps them in at once, then lets the old instance finish its calls and stops it. When the new
   * instance fails to start, the old one keeps running and the error is returned.
   * Without a name: picks up new and removed folders and reloads every running plugin.
   */
  async reload(name: string | undefined, actor: string): Promise<PluginStatus[]> {
    this.#options.kernel.logs.audit({ actor, action: 'plugins.reload', plugin: name ?? '*' });
    if (name !== undefined) {
      await this.#exclusive(name, async () => {
        const record = this.#require(name);
        if (!this.#enabled(name)) throw new HomeAgentError('HA_ERR_PLUGIN_STATE', `${name} is disabled; enable it to load it again`);
        await this.#reloadRecord(record);
      });
      return [this.#status(name)];
    }
    const found = new Map(this.#discover().map((r) => [r.name, r]));
    for (const record of [...this.#records.values()]) {
      if (!found.has(record.name)) {
        await this.#exclusive(record.name, () => this.#stopRecord(record, 'stopped'));
        this.#records.delete(record.name);
      }
    }
    for (const [recordName, fresh] of found) {
      const known = this.#records.get(recordName);
      if (!known) {
        this.#records.set(recordName, fresh);
        if (this.#enabled(recordName)) await this.#exclusive(recordName, () => this.#startRecord(fresh));
        else this.#setState(fresh, 'disabled');
      } else if (known.state === 'running' || known.state === 'quarantined' || known.state === 'restarting') {
        await this.#exclusive(recordName, () => this.#reloadRecord(known)).catch(() => undefined);
      }
    }
    return this.list();
  }

  /**
   * Installs (or upgrades) a plugin from a .tgz or .zip archive and starts it. With `start: false`
   * only the files are put in place (the change tracker starts it through refresh(), so that a
   * version that fails to load counts against the change).
   */
  async install(file: string, actor: string, options: { start?: boolean } = {}): Promise<PluginStatus> {
    const shipped = new Set([...this.#records.values()].filter((r) => r.origin === 'shipped').map((r) => r.name));
    const installed: InstalledArchive = await installArchive({
      file,
      installDir: this.#options.installDir,
      maxBytes: this.#options.limits().install_max_bytes,
      refuseNames: shipped,
      readManifest: (dir) => this.#readManifest(dir, { dir: this.#options.installDir, origin: 'installed', skills: true }) ?? missing(dir),
      staging: async (manifest) => checkEngine(manifest),
    });
    this.#options.kernel.logs.audit({
      actor,
      action: 'plugins.install',
      plugin: installed.manifest.name,
      version: installed.manifest.version,
      file,
    });
    const name = installed.manifest.name;
    return this.#exclusive(name, async () => {
      const existing = this.#records.get(name);
      const record: PluginRecord = {
        name,
        dir: realpathSync(installed.dir),
        origin: 'installed',
        trust: 'external',
        manifest: installed.manifest,
        state: 'stopped',
      };
      if (existing?.current) {
        record.current = existing.current;
        record.state = existing.state;
      }
      this.#records.set(name, record);
      try {
        if (options.start === false) return this.#status(name);
        if (this.#enabled(name)) await this.#reloadRecord(record);
        else this.#setState(record, 'disabled');
      } catch (error) {
        // The files are in place; the plugin stays quarantined with the reason until fixed.
        this.#log.warn({ plugin: name, err: error }, 'installed plugin did not start');
      } finally {
        installed.cleanup();
      }
      return this.#status(name);
    });
  }

  async uninstall(name: string, actor: string): Promise<void> {
    await this.#exclusive(name, async () => {
      const record = this.#require(name);
      if (record.origin !== 'installed') {
        throw new HomeAgentError('HA_ERR_PLUGIN_STATE', `${name} is shipped with HomeAgent and cannot be uninstalled; disable it instead`);
      }
      await this.#stopRecord(record, 'stopped');
      removeInstalled(this.#options.installDir, record.dir);
      this.#records.delete(name);
      this.#state.forget(name);
      this.#options.kernel.logs.audit({ actor, action: 'plugins.uninstall', plugin: name });
    });
  }

  /** Pings every running plugin (or one). */
  async health(name?: string): Promise<Array<{ name: string; state: PluginState; crashed_at?: number } & PluginHealth>> {
    const records = name === undefined ? [...this.#records.values()] : [this.#require(name)];
    return Promise.all(
      records.map(async (r) => ({ ...(await this.#ping(r)), ...(r.crashedAt === undefined ? {} : { crashed_at: r.crashedAt }) })),
    );
  }

  /** Pings one plugin; one that does not answer within core.plugins.health_timeout_ms is unhealthy. */
  async #ping(r: PluginRecord): Promise<{ name: string; state: PluginState } & PluginHealth> {
    if (r.state !== 'running') {
      const ok = r.state === 'disabled' || r.state === 'stopped';
      // The state word itself is put in Chinese by the supervisor (pluginComponent); an error is its own text.
      return { name: r.name, state: r.state, ok, detail: r.error ?? r.state, detail_zh: r.error ?? r.state };
    }
    const instance = r.current?.instance;
    if (!instance?.health) return { name: r.name, state: r.state, ok: true, detail: 'running', detail_zh: 'running' };
    try {
      const answer = await withTimeout(
        Promise.resolve(instance.health()),
        this.#options.limits().health_timeout_ms,
        `health ping of ${r.name}`,
      );
      const detail = String(answer.detail ?? '');
      // A plugin that answers in English only (an external one) is shown in English.
      const detailZh = typeof answer.detail_zh === 'string' && answer.detail_zh !== '' ? answer.detail_zh : detail;
      return { name: r.name, state: r.state, ok: answer.ok === true, detail, detail_zh: detailZh };
    } catch (error) {
      const why = describeError(error);
      return { name: r.name, state: r.state, ok: false, detail: why, detail_zh: why };
    }
  }

  /**
   * Brings the plugins in these folders of the install directory in line with their files (the
   * change tracker calls this after a change and after a rollback): a changed plugin is reloaded,
   * a new folder is started, a removed one is stopped and forgotten. Never throws for one plugin.
   */
  async refresh(folders: readonly string[], actor: string): Promise<RefreshResult> {
    const result: RefreshResult = { plugins: [], errors: [] };
    const root: PluginRoot = { dir: this.#options.installDir, origin: 'installed', skills: true };
    for (const folder of [...new Set(folders)].sort()) {
      const dir = join(this.#options.installDir, folder);
      const known = [...this.#records.values()].find((r) => r.origin === 'installed' && this.#folderOfDir(r.dir) === folder);
      let fresh: PluginRecord | undefined;
      try {
        fresh = existsSync(dir) ? this.#recordAt(dir, root) : undefined;
        this.#rejected.delete(dir);
      } catch (error) {
        this.#rejected.set(dir, describeError(error));
        result.errors.push({ plugin: folder, error: describeError(error) });
      }
      if (known && (!fresh || fresh.name !== known.name)) {
        await this.#exclusive(known.name, () => this.#stopRecord(known, 'stopped'));
        this.#records.delete(known.name);
        result.plugins.push(known.name);
      }
      if (!fresh) continue;
      const clash = this.#records.get(fresh.name);
      if (clash && clash !== known) {
        result.errors.push({ plugin: fresh.name, error: `${dir}: the name ${fresh.name} is already used by ${clash.dir}` });
        continue;
      }
      result.plugins.push(fresh.name);
      const record = known && known.name === fresh.name ? known : fresh;
      this.#records.set(record.name, record);
      if (!this.#enabled(record.name)) {
        this.#setState(record, 'disabled');
        continue;
      }
      this.#options.kernel.logs.audit({ actor, action: 'plugins.refresh', plugin: record.name });
      await this.#exclusive(record.name, async () => {
        try {
          await this.#reloadRecord(record);
        } catch (error) {
          result.errors.push({ plugin: record.name, error: describeError(error) });
          // The running instance's files are gone (a rollback or change replaced them): it must not
          // stay as if nothing happened. A fresh start without it running alongside gets a second
          // chance (it may have failed only because the old one was hogging the machine).
          if (!record.current) return;
          await this.#stopRecord(record, 'stopped');
          await this.#startRecord(record);
        }
      });
    }
    return result;
  }

  /** Stops every running plugin loaded from the install directory; answers their folders (see TrackedPluginHost). */
  async stopTracked(actor: string): Promise<string[]> {
    const folders: string[] = [];
    for (const record of [...this.#records.values()]) {
      const folder = record.origin === 'installed' ? this.#folderOfDir(record.dir) : undefined;
      if (folder === undefined || !record.current) continue;
      this.#options.kernel.logs.audit({ actor, action: 'plugins.stop_for_tracker', plugin: record.name });
      await this.#exclusive(record.name, () => this.#stopRecord(record, 'stopped'));
      folders.push(folder);
    }
    return folders;
  }

  /** A plugin's folder name in the install directory, or undefined for shipped plugins. */
  folderOf(name: string): string | undefined {
    const record = this.#records.get(name);
    return record?.origin === 'installed' ? this.#folderOfDir(record.dir) : undefined;
  }

  // ---- internals ----

  #folderOfDir(dir: string): string | undefined {
    let installDir: string;
    try {
      installDir = realpathSync(this.#options.installDir);
    } catch {
      return undefined;
    }
    const rel = relative(installDir, dir);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
    return rel.split(sep)[0];
  }

  #status(name: string): PluginStatus {
    const status = this.list().find((s) => s.name === name);
    if (!status) throw new HomeAgentError('HA_ERR_PLUGIN_NOT_FOUND', `no plugin named ${name}`);
    return status;
  }

  #require(name: string): PluginRecord {
    const record = this.#records.get(name);
    if (!record) {
      const known = [...this.#records.keys()].sort().join(', ');
      throw new HomeAgentError('HA_ERR_PLUGIN_NOT_FOUND', `no plugin named ${JSON.stringify(name)}; installed: ${known || 'none'}`);
    }
    return record;
  }

  #enabled(name: string): boolean {
    return this.#state.choice(name)?.enabled ?? this.#options.configuredEnabled(name) ?? true;
  }

  async #exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(name) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(fn);
    this.#locks.set(name, run);
    try {
      return await run;
    } finally {
      if (this.#locks.get(name) === run) this.#locks.delete(name);
    }
  }

  #discover(): PluginRecord[] {
    this.#rejected.clear();
    const out: PluginRecord[] = [];
    const seen = new Map<string, string>();
    for (const root of this.#options.roots) {
      if (!existsSync(root.dir)) continue;
      const dirs = readdirSync(root.dir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
        .map((d) => join(root.dir, d.name))
        .sort();
      for (const dir of dirs) {
        try {
          const record = this.#recordAt(dir, root);
          if (!record) continue;
          const clash = seen.get(record.name);
          if (clash) throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${dir}: the name ${record.name} is already used by ${clash}`);
          seen.set(record.name, dir);
          out.push(record);
        } catch (error) {
          this.#rejected.set(dir, describeError(error));
          this.#log.error({ dir, err: error }, 'plugin refused before loading');
        }
      }
    }
    return out;
  }

  /** The plugin in `dir` as found now (not started); undefined when the folder holds none. */
  #recordAt(dir: string, root: PluginRoot): PluginRecord | undefined {
    const manifest = this.#readManifest(dir, root);
    if (!manifest) return undefined;
    if (root.origin === 'installed' && manifest.kind === 'builtin') {
      throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${dir}: installed plugins cannot be of kind builtin (use process or lua)`);
    }
    if (root.origin === 'shipped' && manifest.kind !== 'builtin' && manifest.kind !== 'skill') {
      throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${dir}: shipped plugins must be builtin or skill`);
    }
    return {
      name: manifest.name,
      dir: realpathSync(dir),
      origin: root.origin,
      trust: root.origin === 'shipped' ? 'builtin' : 'external',
      manifest,
      state: 'stopped',
    };
  }

  #readManifest(dir: string, root: PluginRoot): Manifest | undefined {
    // An OpenClaw-format package gets its plugin.json and runtime written beside it once (docs/openclaw.md).
    if (root.origin === 'installed' && isOpenClawPackage(dir)) convertOpenClawPackage(dir);
    if (existsSync(join(dir, 'plugin.json'))) return readManifest(join(dir, 'plugin.json'));
    if (root.skills && existsSync(join(dir, 'SKILL.md'))) {
      if (!this.#options.skillManifest) throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `${dir}: skills are not supported here`);
      return this.#options.skillManifest(dir);
    }
    return undefined;
  }

  /** The manifest as it is on disk now (the files may have changed since discovery: that is what reloads are for). */
  #freshManifest(record: PluginRecord): Manifest {
    const root: PluginRoot = { dir: record.dir, origin: record.origin, skills: true };
    const manifest = this.#readManifest(record.dir, root);
    if (!manifest) throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${record.dir} has no plugin.json or SKILL.md any more`);
    if (manifest.name !== record.name) {
      throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${record.dir}: the manifest now names ${manifest.name}, not ${record.name}`);
    }
    return manifest;
  }

  /** Starts a fresh generation of a stopped, disabled or quarantined plugin. Never throws. */
  async #startRecord(record: PluginRecord): Promise<void> {
    this.#setState(record, 'starting');
    try {
      record.manifest = this.#freshManifest(record);
      const generation = await this.#startGeneration(record);
      generation.commit();
      record.current = generation;
      this.#setState(record, 'running');
    } catch (error) {
      this.#quarantine(record, error);
    }
  }

  async #reloadRecord(record: PluginRecord): Promise<void> {
    const old = record.current;
    if (!old?.live) {
      await this.#startRecord(record);
      if (record.state === 'quarantined') throw new HomeAgentError('HA_ERR_PLUGIN_START', record.error ?? 'failed to start');
      return;
    }
    let generation: PluginGeneration;
    let manifest: Manifest;
    try {
      manifest = this.#freshManifest(record);
      generation = await this.#startGeneration({ ...record, manifest });
      generation.commit();
    } catch (error) {
      this.#log.error({ plugin: record.name, err: error }, 'reload failed; the running instance stays');
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_START',
        `reload of ${record.name} failed, the running version stays: ${describeError(error)}`,
        {
          cause: error,
        },
      );
    }
    record.manifest = manifest;
    record.current = generation;
    old.retire();
    this.#setState(record, 'running');
    this.#log.info({ plugin: record.name, version: manifest.version }, 'plugin reloaded');
    await old.drain(this.#options.limits().reload_drain_ms);
    await this.#stopInstance(old, record.name);
  }

  /**
   * At start, before any plugin loads: every file section of a plugin found is checked against its
   * manifest, and all problems refuse the start together; a section of a plugin that is not
   * installed is only warned about (it may be installed later, and is checked then).
   */
  #checkConfigSections(found: readonly PluginRecord[]): void {
    const configured = this.#options.configSections;
    if (!configured) return;
    const byName = new Map(found.map((r) => [r.name, r]));
    const problems: string[] = [];
    for (const [name, section] of configured.sections) {
      const record = byName.get(name);
      if (record) problems.push(...checkPluginSection(record.manifest, section, configured.file));
      else
        this.#log.warn(
          { section: `plugin.${name}`, file: configured.file },
          unusedSectionWarning(name, [...byName.keys()], configured.file),
        );
    }
    if (problems.length > 0) {
      throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `invalid configuration:\n${problems.join('\n')}`, { details: { problems } });
    }
  }

  /** The file's section of this plugin must fit the manifest being started (it may have changed since start). */
  #checkConfigSection(manifest: Manifest): void {
    const configured = this.#options.configSections;
    const section = configured?.sections.get(manifest.name);
    if (!configured || !section) return;
    const problems = checkPluginSection(manifest, section, configured.file);
    if (problems.length > 0) {
      throw new HomeAgentError(
        'HA_ERR_CONFIG_INVALID',
        `the configuration file's section plugin.${manifest.name} does not fit the plugin's settings: ${problems.join('; ')}`,
        { details: { problems } },
      );
    }
  }

  /** Builds a generation and starts its instance with registrations staged (not yet live). */
  async #startGeneration(record: PluginRecord): Promise<PluginGeneration> {
    const { manifest } = record;
    checkEngine(manifest);
    this.#checkConfigSection(manifest);
    defineManifestSettings(this.#options.kernel.settings, manifest);
    const generation = new PluginGeneration({
      manifest,
      trust: record.trust,
      root: record.dir,
      dataDir: join(this.#options.pluginDataDir, manifest.name),
      runtimeDir: this.#options.runtimeDir,
      kernel: this.#options.kernel,
    });
    try {
      const instance = await this.#runtime(manifest.kind)(this.#runtimeContext(record, generation));
      generation.instance = instance;
      await withTimeout(instance.start(this.#signal), this.#options.timeoutMs(), `start of plugin ${manifest.name}`);
      return generation;
    } catch (error) {
      generation.retire();
      if (generation.instance) await this.#stopInstance(generation, manifest.name);
      throw error;
    }
  }

  #runtime(kind: PluginKind): PluginRuntime {
    if (kind === 'builtin') return builtinRuntime;
    const runtime = this.#options.runtimes[kind];
    if (!runtime) throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `plugins of kind ${kind} are not supported by this daemon`);
    return runtime;
  }

  #runtimeContext(record: PluginRecord, generation: PluginGeneration): RuntimeContext {
    return {
      manifest: generation.manifest,
      dir: record.dir,
      context: generation.context,
      limits: this.#options.limits,
      dataDir: this.#options.dataDir,
      log: generation.context.log,
      reportState: (state: ReportedState, detail?: string) => {
        // Only the current generation speaks for the plugin; an old one being drained does not.
        if (record.current !== generation) return;
        if (state === 'failed' || state === 'restarting') record.crashedAt = this.#options.kernel.now();
        if (state === 'failed') {
          this.#quarantine(record, new HomeAgentError('HA_ERR_PLUGIN_DEAD', detail ?? 'the plugin failed'));
          void generation.removeAll();
          generation.retire();
        } else {
          this.#setState(record, state, state === 'restarting' ? detail : undefined);
        }
      },
    };
  }

  async #stopRecord(record: PluginRecord, final: 'stopped' | 'disabled'): Promise<void> {
    const generation = record.current;
    if (generation && (record.state === 'running' || record.state === 'restarting' || record.state === 'starting')) {
      this.#setState(record, 'stopping');
      generation.retire();
      const ok = await this.#stopInstance(generation, record.name);
      await generation.removeAll();
      delete record.current;
      if (!ok) {
        this.#quarantine(record, new HomeAgentError('HA_ERR_PLUGIN_START', 'did not stop cleanly'));
        if (final === 'disabled') this.#setState(record, 'disabled', record.error);
        return;
      }
    } else if (generation) {
      await generation.removeAll();
      delete record.current;
    }
    this.#setState(record, final);
  }

  async #stopInstance(generation: PluginGeneration, name: string): Promise<boolean> {
    const instance = generation.instance;
    if (!instance) return true;
    try {
      await withTimeout(instance.stop(), this.#options.timeoutMs(), `stop of plugin ${name}`);
      return true;
    } catch (error) {
      this.#log.error({ plugin: name, err: error }, 'plugin failed to stop cleanly');
      return false;
    }
  }

  #quarantine(record: PluginRecord, error: unknown): void {
    this.#log.error({ plugin: record.name, err: error }, 'plugin quarantined');
    this.#setState(record, 'quarantined', describeError(error));
  }

  #setState(record: PluginRecord, state: PluginState, error?: string): void {
    record.state = state;
    if (error === undefined) delete record.error;
    else record.error = error;
    const serviceState = state === 'quarantined' ? 'failed' : state === 'disabled' || state === 'restarting' ? undefined : state;
    if (serviceState === undefined) return;
    this.#options.kernel.events.emit('service.state', {
      name: record.name,
      kind: 'plugin',
      state: serviceState,
      ...(error === undefined ? {} : { error }),
    });
  }
}

function missing(dir: string): never {
  throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${dir} has no plugin.json or SKILL.md`);
}

/** Imports of the same entry so far: a reload needs a fresh module instance, not the cached one. */
let importGeneration = 0;

/**
 * Built-in plugins are imported in-process; their entry default-exports definePlugin(...). Each
 * load imports the entry under a new URL query so a reload runs the files as they are now (Node
 * cannot unload the old module: each reload of an in-process plugin keeps its old code in memory).
 */
const builtinRuntime: PluginRuntime = async ({ manifest, dir, context }) => {
  const url = `${pathToFileURL(join(dir, manifest.entry)).href}?generation=${++importGeneration}`;
  const module = (await import(url)) as { default?: unknown };
  if (!isPluginModule(module.default)) {
    throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `${manifest.entry} does not default-export definePlugin(...)`);
  }
  return module.default.create(context);
};

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HomeAgentError('HA_ERR_PLUGIN_TIMEOUT', `${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
