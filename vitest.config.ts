import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The files that take longest start first, so the suite does not end on one of them running alone. Vitest orders by
 * the durations it cached in node_modules, which `npm ci` wipes (CI starts without them, and would order by file size,
 * which puts short files of many processes, such as the job crash test, last). A file that mostly computes (the
 * differential test, the embedded PGlite ones, text-input) alternates with one that mostly waits (a lease to lapse, a
 * redelivery, a child process): three run at once on two cores, and three that compute slowed each other by half.
 */
const SLOW_FIRST = [
  'test/properties/metrics-differential-1.test.ts',
  'test/jobs/crash.test.ts',
  'test/properties/metrics-differential-2.test.ts',
  'test/e2e/embedded.test.ts',
  'test/e2e/import-race.test.ts',
  'test/http/demo.test.ts',
  'test/jobs/pitch-job.test.ts',
  'test/e2e/knowledge-embedded.test.ts',
  'test/pages/pitch-report.test.ts',
  'test/http/text-input.test.ts',
  'test/e2e/cli.test.ts',
  'test/http/write-waits.test.ts',
  'test/jobs/caps.test.ts',
  'test/projections/runner.test.ts',
  'test/http/content-pipeline.test.ts',
  'test/email/outbox.test.ts',
  'test/bus/nats.test.ts',
  'test/e2e/erasure.test.ts',
];

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((p) => f.moduleId.endsWith(p));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // on a real Postgres server: one database with the whole schema, copied for each test file (see the file)
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    // a file's first server start may also build the run's schema template (test/support/db.ts), or wait for it
    hookTimeout: 120_000,
    pool: 'forks',
    // one process per worker for all its files: each file importing the module graph afresh cost more CPU than most
    // tests (about half the suite's CPU); files share nothing else (each opens its own database, server and bus)
    isolate: false,
    // three files at a time on two cores (a file often waits on Postgres, a child process, a lease or a timer); each file
    // gets its own database. Whole suite, quiet machine: 171 s with three, 166 s with four (busier, and one email crash
    // test ran out its wait), 139-155 s with three once the tests stopped waiting on production leases and waits; two were 260-285 s before the read horizon left other databases' transactions out (with
    // three, another file's long transaction held catch-up back past a write's 5 s wait: docs/architecture.md, "Operators")
    maxWorkers: 3,
    sequence: { sequencer: SlowFirst },
    // the default output, then the tests that took more than half of their timeout, if any (test/support/timeout-margin.ts)
    reporters: ['default', './test/support/timeout-margin.ts'],
  },
});
