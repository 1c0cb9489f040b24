import { closeSync, fstatSync, openSync, statSync } from 'node:fs';

/** A lock held on a file: released by `release`, or by the kernel when the process dies. */
export interface HeldLock {
  release(): void;
}

/**
 * Exclusive locks on files that the kernel drops the moment their holder dies (SIGKILL, the OOM
 * killer), whatever its pid namespace: flock(2), reached through the koffi FFI, as Node has no
 * file locks of its own. A pid in an owner mark would not do: workers in containers sharing a
 * volume each see their own pids, and a restarted container reuses them.
 */
export interface FileLocks {
  /**
   * Opens (creating) and locks `path` without waiting. Null when another holds it, or when it
   * cannot be locked at all (a file system without locks): never taken for free.
   */
  tryLock(path: string): HeldLock | null;
}

const LOCK_EX = 2;
const LOCK_NB = 4;

/** flock through koffi; null where koffi has no build or libc no `flock` (the caller then keeps every folder). */
export async function loadFileLocks(): Promise<FileLocks | null> {
  try {
    // Loaded on demand: koffi throws at require time where it has no build for the platform.
    const koffi = (await import('koffi')).default;
    const flock = koffi.load(null).func('int flock(int fd, int operation)') as (
      fd: number,
      op: number,
    ) => number;
    return {
      tryLock(path) {
        const fd = openSync(path, 'a', 0o600);
        // Locked, and still the file the path names: a holder that removed it (its folder
        // done with) between our open and our lock leaves us a lock on a file nobody can find.
        if (flock(fd, LOCK_EX | LOCK_NB) !== 0 || !sameFile(path, fd)) {
          closeSync(fd);
          return null;
        }
        let held = true;
        return {
          release() {
            if (!held) return;
            held = false;
            closeSync(fd);
          },
        };
      },
    };
  } catch {
    return null;
  }
}

function sameFile(path: string, fd: number): boolean {
  const named = statSync(path, { throwIfNoEntry: false });
  return named !== undefined && named.ino === fstatSync(fd).ino && named.dev === fstatSync(fd).dev;
}
