import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FileLocks, loadFileLocks } from './file-lock';
import { ScratchSpace } from './scratch-space';

const ID = 'tr_AAAAAAAAAAAAAAAAAAAA';
const OTHER = 'tr_BBBBBBBBBBBBBBBBBBBB';

describe('ScratchSpace', () => {
  let dir = '';
  let locks: FileLocks;
  beforeAll(async () => {
    locks = (await loadFileLocks())!;
    expect(locks).not.toBeNull();
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'hark-scratch-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** What a run that died leaves: its folder with the audio, and its lock file, held by nobody. */
  function deadRun(name: string) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'source'), 'audio');
    writeFileSync(path.join(dir, `${name}.lock`), '');
  }

  it('claim: a folder of its own per run, held (another worker sharing the folder keeps it) until release', async () => {
    const own = new ScratchSpace(dir, locks);
    const other = new ScratchSpace(dir, locks);
    const [a, b] = [await own.claim(ID), await own.claim(ID)];
    expect(a.path).not.toBe(b.path);
    expect(path.basename(a.path)).toMatch(new RegExp(`^${ID}\\.[0-9a-f]{8}$`));
    writeFileSync(path.join(a.path, 'source'), 'audio');
    await expect(other.sweep()).resolves.toBe(0);
    await expect(other.removeLeftovers(ID)).resolves.toBe(0);
    expect(existsSync(path.join(a.path, 'source'))).toBe(true);
    await a.release();
    await b.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('sweep: removes the folders and lock files of runs that died, and what earlier versions left; nothing else', async () => {
    deadRun(`${ID}.0123abcd`);
    writeFileSync(path.join(dir, `${OTHER}.89abcdef.lock`), ''); // died before making its folder
    mkdirSync(path.join(dir, OTHER)); // an earlier version's job folder
    mkdirSync(path.join(dir, 'hark-whisper-x1Y2z3')); // an earlier version's engine run
    mkdirSync(path.join(dir, 'models'));
    writeFileSync(path.join(dir, 'notes.txt'), '');
    const live = await new ScratchSpace(dir, locks).claim(OTHER);

    await expect(new ScratchSpace(dir, locks).sweep()).resolves.toBe(3);
    expect(readdirSync(dir).sort()).toEqual(
      ['models', 'notes.txt', path.basename(live.path), `${path.basename(live.path)}.lock`].sort(),
    );
    await live.release();
  });

  it("removeLeftovers: only this transcript's dead runs", async () => {
    deadRun(`${ID}.0123abcd`);
    deadRun(`${OTHER}.0123abcd`);
    mkdirSync(path.join(dir, ID));
    await expect(new ScratchSpace(dir, locks).removeLeftovers(ID)).resolves.toBe(2);
    expect(readdirSync(dir).sort()).toEqual([`${OTHER}.0123abcd`, `${OTHER}.0123abcd.lock`]);
  });

  it('a file system that locks nothing: a run goes on unlocked, and no sweep removes its folder', async () => {
    const refusing: FileLocks = { tryLock: () => null };
    const run = await new ScratchSpace(dir, refusing).claim(ID);
    await expect(new ScratchSpace(dir, refusing).sweep()).resolves.toBe(0);
    expect(existsSync(run.path)).toBe(true);
    await run.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('without file locks: the sweep keeps everything; a job removes its own predecessors as before', async () => {
    deadRun(`${ID}.0123abcd`);
    deadRun(`${OTHER}.0123abcd`);
    const space = new ScratchSpace(dir, null);
    expect(space.sweeps).toBe(false);
    await expect(space.sweep()).resolves.toBe(0);
    await expect(space.removeLeftovers(ID)).resolves.toBe(1);
    expect(readdirSync(dir).sort()).toEqual([`${OTHER}.0123abcd`, `${OTHER}.0123abcd.lock`]);
    const run = await space.claim(ID);
    await run.release();
    expect(existsSync(run.path)).toBe(false);
  });
});
