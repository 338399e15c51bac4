// A setup file bench/suite-cpu.sh gives vitest (it runs before each test file, in the file's worker process):
// - appends each test's count of assertions (expect() calls) to the file named by SUITE_ASSERTION_COUNTS, one line a
//   test, so that a run's total can be compared with another's;
// - appends the file's CPU in its worker (this process's user + system, all its threads, from here, before the file's
//   own imports, to after its last hook) and wall time to SUITE_FILE_CPU: `<ms cpu> <ms wall> <file>`. The first file
//   of each worker also pays for importing the module graph.
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';

const counts = process.env.SUITE_ASSERTION_COUNTS;
if (counts)
  afterEach(() => {
    appendFileSync(counts, `${expect.getState().assertionCalls}\n`);
  });

const perFile = process.env.SUITE_FILE_CPU;
if (perFile) {
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  afterAll(() => {
    const c = process.cpuUsage(cpu0);
    const file = relative(process.cwd(), expect.getState().testPath ?? '?');
    appendFileSync(perFile, `${Math.round((c.user + c.system) / 1000)} ${Date.now() - t0} ${file}\n`);
  });
}
