/**
 * Commands run on devices, as jobs: device_ctl_cmdrun starts one and waits a while for it; a
 * command that takes longer answers its job id, and device_ctl_cmdresult reads (or waits for) the
 * result later. At most max_jobs are remembered, the oldest finished ones dropped first; jobs live
 * in memory only (a restart forgets them, and the device's connection with it).
 */
import { randomBytes } from 'node:crypto';
import { HomeAgentError, isHomeAgentError } from '../../src/sdk/index.js';

export interface CommandOutcome {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** The device or the gateway cut stdout or stderr. */
  truncated: boolean;
}

export interface CommandJob {
  job_id: string;
  device: string;
  command: string;
  args: string[];
  started_at: number;
  status: 'running' | 'done' | 'failed';
  finished_at?: number;
  outcome?: CommandOutcome;
  error?: { code: string; message: string };
}

export class CommandJobs {
  readonly #jobs = new Map<string, { job: CommandJob; done: Promise<void> }>();
  readonly #max: () => number;

  constructor(max: () => number) {
    this.#max = max;
  }

  start(device: string, command: string, args: string[], run: Promise<CommandOutcome>): CommandJob {
    const job: CommandJob = {
      job_id: `job_${randomBytes(6).toString('hex')}`,
      device,
      command,
      args,
      started_at: Date.now(),
      status: 'running',
    };
    const done = run.then(
      (outcome) => {
        job.status = 'done';
        job.outcome = outcome;
        job.finished_at = Date.now();
      },
      (error: unknown) => {
        job.status = 'failed';
        job.error = isHomeAgentError(error)
          ? { code: error.code, message: error.message }
          : { code: 'HA_ERR_INTERNAL', message: String(error) };
        job.finished_at = Date.now();
      },
    );
    this.#jobs.set(job.job_id, { job, done });
    this.#trim();
    return job;
  }

  /** The job after waiting at most `waitMs` for it to finish. */
  async wait(jobId: string, waitMs: number): Promise<CommandJob> {
    const entry = this.#jobs.get(jobId);
    if (!entry) {
      throw new HomeAgentError(
        'HA_ERR_REMOTEDEVICE_NO_JOB',
        `no command job ${jobId} is known (never started here, or dropped after newer ones)`,
      );
    }
    if (entry.job.status === 'running' && waitMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([entry.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return { ...entry.job };
  }

  recent(device: string, limit: number): CommandJob[] {
    return [...this.#jobs.values()]
      .map((e) => e.job)
      .filter((job) => job.device === device)
      .slice(-limit)
      .map(({ outcome: _outcome, ...job }) => job);
  }

  #trim(): void {
    const max = this.#max();
    if (this.#jobs.size <= max) return;
    for (const [id, { job }] of this.#jobs) {
      if (this.#jobs.size <= max) return;
      if (job.status !== 'running') this.#jobs.delete(id);
    }
    // Only running jobs left over the limit: the oldest go too (their results are then lost).
    for (const id of this.#jobs.keys()) {
      if (this.#jobs.size <= max) return;
      this.#jobs.delete(id);
    }
  }
}
