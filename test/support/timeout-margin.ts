import type { Reporter, TestCase, TestModule } from 'vitest/node';

/**
 * A reporter beside the default one (vitest.config.ts): at the end of the run, names every test that took more than
 * half of its timeout (its own, or the run's testTimeout), with both figures. Such a test fails on a machine twice as
 * loaded; make it cheaper, or give it a timeout of its own with a comment saying why its work is long. Prints nothing
 * when there is none.
 */
export default class TimeoutMargin implements Reporter {
  private readonly close: { name: string; ms: number; timeout: number }[] = [];

  onTestCaseResult(test: TestCase): void {
    const timeout = test.options.timeout;
    const ms = test.diagnostic()?.duration;
    if (timeout === undefined || ms === undefined || test.result().state !== 'passed') return;
    if (ms > timeout / 2) this.close.push({ name: `${test.module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`, ms, timeout });
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>): void {
    if (!this.close.length) return;
    console.log(`\n${this.close.length} test(s) took more than half of their timeout:`);
    for (const c of this.close.sort((a, b) => b.ms / b.timeout - a.ms / a.timeout))
      console.log(`  ${Math.round(c.ms)} ms of ${c.timeout} ms  ${c.name}`);
  }
}
