// A disk that fills up under a worker's scratch folder: a size-limited tmpfs mounted on it where
// the machine allows (root), with a ballast file that leaves only a little room; or, elsewhere, an
// engine stand-in whose writes fail with ENOSPC (the same failure, met at another write).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { faultsConfig } from './config';
import { script } from './engines';

export interface SmallDisk {
  /** Fills the disk with a ballast file, leaving `freeBytes` of room (again: another amount). */
  fill(freeBytes: number): void;
  /** Removes the ballast: the room is back. */
  free(): void;
  unmount(): void;
}

/**
 * A tmpfs of `bytes` mounted on `dir` (made if missing), or null where mounting is not allowed
 * (not root, or no CAP_SYS_ADMIN in a container) or FAULTS_NO_MOUNT=1 asks for the fallback.
 */
export function mountSmallDisk(dir: string, bytes: number): SmallDisk | null {
  if (process.getuid?.() !== 0 || faultsConfig.noMount) return null;
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'hark-faults', dir], {
      stdio: 'ignore',
    });
  } catch {
    return null;
  }
  const ballast = path.join(dir, 'ballast');
  return {
    fill(freeBytes) {
      const { bavail, bsize } = statfsSync(dir);
      // The ballast is rewritten: what it holds now counts as room.
      const held = statSync(ballast, { throwIfNoEntry: false })?.size ?? 0;
      writeFileSync(ballast, Buffer.alloc(Math.max(0, bavail * bsize + held - freeBytes)));
    },
    free: () => rmSync(ballast, { force: true }),
    unmount() {
      if (existsSync(dir)) execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    },
  };
}

/**
 * A whisper-cli stand-in that, while `marker` exists, fails as a real one does on a full disk
 * (a write refused with ENOSPC: here, to /dev/full), and otherwise runs `engine`.
 */
export function diskFullEngine(engine: string, marker: string): Promise<string> {
  return script(
    `if [ -e '${marker}' ]; then printf 'out' > /dev/full || exit 1; fi\nexec '${engine}' "$@"\n`,
  );
}
