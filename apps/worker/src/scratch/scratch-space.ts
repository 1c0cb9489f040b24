import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FileLocks } from './file-lock';

/** One run's folder, held by this process until `release` removes it. */
export interface JobFolder {
  readonly path: string;
  release(): Promise<void>;
}

/** A run's folder: `<transcript id>.<8 hex>`, beside its lock file `<that>.lock`. */
const RUN = /^(tr_[A-Za-z0-9_-]{20})\.[0-9a-f]{8}$/;
const RUN_LOCK = /^(tr_[A-Za-z0-9_-]{20}\.[0-9a-f]{8})\.lock$/;
/** What earlier versions left, without a lock: `<transcript id>` folders and the engine's `hark-whisper-*`. */
const LEGACY = /^(tr_[A-Za-z0-9_-]{20}|hark-whisper-.+)$/;

/**
 * The worker's scratch folder (`HARK_TMP_DIR`), which several worker processes may share. Each
 * run of a job works in a folder of its own, `<transcript id>.<random>`, and holds an exclusive
 * lock on `<folder>.lock` (made before the folder) while it runs; the kernel drops the lock when
 * the process dies, however it dies. A folder whose lock anyone can take belongs to no live run,
 * and is removed: by the job's next run (`removeLeftovers`, whatever it then finds the transcript
 * to be) and by every worker as it starts (`sweep`). Nothing else in the folder is touched (the
 * model cache lives there by default), except what earlier versions left (`LEGACY`): a worker of
 * an earlier version must not share the folder.
 *
 * Without file locks (`locks` null: no koffi build for the platform) the sweep keeps everything,
 * and a job's next run removes its predecessors' folders unconditionally, as before.
 */
export class ScratchSpace {
  constructor(
    readonly dir: string,
    private readonly locks: FileLocks | null,
  ) {}

  /** Whether the sweep can tell dead runs' folders from live ones. */
  get sweeps(): boolean {
    return this.locks !== null;
  }

  /** A folder of its own for this run of the transcript's job (0700: the caller's audio). */
  async claim(transcriptId: string): Promise<JobFolder> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (let attempt = 1; ; attempt++) {
      const folder = path.join(this.dir, `${transcriptId}.${randomBytes(4).toString('hex')}`);
      // The lock first: a folder whose lock file is missing can only be a dead run's.
      const lock = this.locks?.tryLock(`${folder}.lock`) ?? null;
      // Taken meanwhile (a sweep that found the fresh file): another name. A file system that
      // locks nothing refuses every time; then the run goes on unlocked, as no sweep can take
      // its lock either.
      if (this.locks && !lock && attempt < 3) continue;
      await mkdir(folder, { mode: 0o700 });
      return {
        path: folder,
        release: async () => {
          await rm(folder, { recursive: true, force: true });
          await rm(`${folder}.lock`, { force: true });
          lock?.release();
        },
      };
    }
  }

  /** Removes the folders earlier runs of this transcript's job left, where no live run holds them. */
  async removeLeftovers(transcriptId: string): Promise<number> {
    const names = (await this.names()).filter((n) => n === transcriptId || n.startsWith(`${transcriptId}.`));
    if (!this.locks) {
      await Promise.all(names.map((n) => rm(path.join(this.dir, n), { recursive: true, force: true })));
      return names.filter((n) => !n.endsWith('.lock')).length;
    }
    return this.removeUnheld(names);
  }

  /** Removes every run folder no live run holds, and what earlier versions left. Returns how many. */
  async sweep(): Promise<number> {
    if (!this.locks) return 0;
    return this.removeUnheld(await this.names());
  }

  private async removeUnheld(names: string[]): Promise<number> {
    let removed = 0;
    const runs = new Set(names.filter((n) => RUN.test(n)));
    // A lock file whose run never made its folder, or died after removing it.
    for (const n of names) {
      const run = RUN_LOCK.exec(n)?.[1];
      if (run) runs.add(run);
    }
    for (const run of runs) {
      const lock = this.locks!.tryLock(path.join(this.dir, `${run}.lock`));
      if (!lock) continue;
      try {
        await rm(path.join(this.dir, run), { recursive: true, force: true });
        await rm(path.join(this.dir, `${run}.lock`), { force: true });
        if (names.includes(run)) removed++;
      } finally {
        lock.release();
      }
    }
    for (const n of names.filter((x) => LEGACY.test(x))) {
      await rm(path.join(this.dir, n), { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  private names(): Promise<string[]> {
    return readdir(this.dir).catch(() => [] as string[]);
  }
}
