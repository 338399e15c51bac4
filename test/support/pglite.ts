import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { inject } from 'vitest';
import { type Database, openPglite } from '../../src/db';

/** how long a process waits for the file another process is building before it runs initdb itself */
const BUILD_WAIT_MS = 180_000;

function imagePath(): string | null {
  try {
    return inject('pgliteImage') ?? null;
  } catch {
    return null; // outside a vitest worker
  }
}

let image: Promise<Blob | null> | undefined;

/**
 * This run's freshly initdb'd PGlite data directory as a tarball (test/support/global-setup.ts names the file): the
 * first process that asks runs initdb once and writes it (under a lock file; the others wait for it), and every
 * in-memory PGlite of the run starts from a copy. initdb is 3.4-6.8 s of CPU per embedded database; a copy opens in
 * about 1 s. Null outside vitest (then each open runs its own initdb).
 */
function pgliteImage(): Promise<Blob | null> {
  const path = imagePath();
  if (!path) return Promise.resolve(null);
  image ??= readImage(path).catch((err) => {
    image = undefined;
    throw err;
  });
  return image;
}

function tryLock(path: string): number | null {
  try {
    return openSync(path, 'wx');
  } catch {
    return null;
  }
}

async function readImage(path: string): Promise<Blob | null> {
  const deadline = Date.now() + BUILD_WAIT_MS;
  for (;;) {
    if (existsSync(path)) return new Blob([readFileSync(path)]);
    const lock = tryLock(`${path}.lock`);
    if (lock === null) {
      // another process is building it
      if (Date.now() > deadline) return null;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      const { PGlite } = await import('@electric-sql/pglite');
      const lite = new PGlite('memory://');
      await lite.waitReady;
      const tar = await lite.dumpDataDir('none');
      await lite.close();
      writeFileSync(`${path}.tmp`, Buffer.from(await tar.arrayBuffer()));
      renameSync(`${path}.tmp`, path);
    } catch {
      // this open runs initdb itself (and fails there, if PGlite cannot start at all); the others wait out their time
      return null;
    } finally {
      closeSync(lock);
    }
  }
}

/** A new in-memory PGlite, started from this run's initdb'd data directory (pgliteImage) when there is one. */
export async function openTestPglite(): Promise<Database> {
  return openPglite('memory://', (await pgliteImage()) ?? undefined);
}

/**
 * Writes this run's initdb'd data directory (pgliteImage) into `dir`, an embedded DATA_DIR's `pg/`, so that the process
 * that opens it next skips initdb (about 3 s of CPU in a child process; the copy is about 1 s here). Does nothing
 * outside vitest: that process then runs initdb itself.
 */
export async function seedPgliteDir(dir: string): Promise<void> {
  const tar = await pgliteImage();
  if (!tar) return;
  mkdirSync(dir, { recursive: true });
  await (await openPglite(dir, tar)).close();
}
