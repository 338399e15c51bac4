import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TestProject } from 'vitest/node';
import { dropDatabases, onServer } from './pg-server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the name of this run's schema template on the real server (see test/support/db.ts), or null (none) */
    schemaTemplate: string | null;
    /** the directory of this run's bundles of CHILD_ENTRIES, or null (none: children load their source through tsx) */
    bundles: string | null;
    /** the name prefix of this run's test databases on the real server, dropped together when the run ends, or null */
    testDatabases: string | null;
    /** the file of this run's initdb'd PGlite data directory (test/support/pglite.ts), or null (each PGlite runs initdb) */
    pgliteImage: string | null;
  }
}

/**
 * The entry points the tests start as processes of their own. A process started through tsx (`node --import tsx
 * src/cli.ts`) spends about 2.5 s of CPU loading the source tree through tsx's loader hooks, one module at a time; the
 * same entry bundled once per run (esbuild, node_modules left out) loads in about 1 s. The suite starts some thirty such
 * processes.
 */
export const CHILD_ENTRIES = [
  'src/main.ts',
  'src/cli.ts',
  'test/support/server-child.ts',
  'test/support/job-child.ts',
  'test/support/pitch-child.ts',
  'test/support/runner-child.ts',
  'test/support/email-child.ts',
  'test/support/webhook-child.ts',
  'test/support/cli-host.ts',
] as const;

export type ChildEntry = (typeof CHILD_ENTRIES)[number];

/** written into the bundles' directory once they are all there, or (with esbuild's message) if the build failed */
export const BUILT = '.built';
export const BUILD_FAILED = '.failed';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Bundles every entry of CHILD_ENTRIES into `dir` (inside the repository, so that the bundles find node_modules), each
 * as `<dir>/<its path>.mjs`. A module's own `import.meta.url` (files read beside it: infra/*.json) is kept as its source
 * file's URL. esbuild is tsx's own (the one that transpiles `npm start`).
 */
export async function buildChildBundles(dir: string): Promise<void> {
  const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx'))('esbuild') as typeof import('esbuild');
  mkdirSync(dir, { recursive: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [...CHILD_ENTRIES],
    outbase: '.',
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    plugins: [
      {
        name: 'source-import-meta-url',
        setup(build) {
          build.onLoad({ filter: /\.ts$/ }, (args) => ({
            contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
            loader: 'ts',
          }));
        },
      },
    ],
  });
}

/**
 * Names this run's schema template: a database on the real server with every table a server creates at start and no
 * row, copied for each test file's database (`create database ... template`), so that a file's server finds its
 * schema instead of creating it (hundreds of DDL statements, each a commit). The first file that needs it builds it
 * (test/support/db.ts); it is dropped at the end of the run. TEST_SCHEMA_TEMPLATE=off: every file's schema is built
 * from nothing, as before the template.
 *
 * Bundles the child processes' entry points (CHILD_ENTRIES) into test-output/bundles/<run>, removed at the end of the
 * run; the tests start them with `nodeArgs(entry)` (test/support/bundles.ts). BUNDLE_CHILDREN=off: every child loads
 * its source through tsx.
 *
 * Names the file of this run's initdb'd PGlite data directory (test/support/pglite.ts: written by the first process
 * that opens an in-memory PGlite, removed at the end of the run). PGLITE_IMAGE=off: every PGlite runs its own initdb.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const run = randomBytes(6).toString('hex');
  const teardown: (() => Promise<void> | void)[] = [];
  if (process.env.BUNDLE_CHILDREN === 'off') project.provide('bundles', null);
  else {
    // built while the first files start (about 1.5 s; most files start no process): nodeArgs waits for BUILT
    const dir = join(ROOT, 'test-output', 'bundles', run);
    const built = buildChildBundles(dir).then(
      () => writeFileSync(join(dir, BUILT), ''),
      (err) => {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, BUILD_FAILED), String(err instanceof Error ? err.message : err));
      },
    );
    teardown.push(async () => {
      await built;
      rmSync(dir, { recursive: true, force: true });
    });
    project.provide('bundles', dir);
  }
  if (process.env.PGLITE_IMAGE === 'off') project.provide('pgliteImage', null);
  else {
    const dir = join(ROOT, 'test-output', 'pglite');
    mkdirSync(dir, { recursive: true });
    const image = join(dir, `${run}.tar`);
    project.provide('pgliteImage', image);
    teardown.push(() => {
      for (const f of [image, `${image}.lock`, `${image}.tmp`]) rmSync(f, { force: true });
    });
  }
  const serverUrl = process.env.DATABASE_URL;
  // every test file's database stays until the run ends (test/support/db.ts says why), then they go together
  project.provide('testDatabases', serverUrl ? `aivis_t_${run}` : null);
  if (serverUrl) teardown.push(() => dropDatabases(serverUrl, `aivis_t_${run}_`));
  if (!serverUrl || process.env.TEST_SCHEMA_TEMPLATE === 'off') project.provide('schemaTemplate', null);
  else {
    const name = `aivis_tpl_${run}`;
    project.provide('schemaTemplate', name);
    teardown.push(() => onServer(serverUrl, `drop database if exists ${name} with (force)`));
  }
  return async () => {
    for (const t of teardown) await t();
  };
}
