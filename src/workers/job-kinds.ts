import type { JobSpec } from './jobs';
import { probeJob } from './probe';

/** The kinds of job every instance runs: an area adds its spec here, beside its line in src/domain/jobs.ts. */
export const jobSpecs = (): JobSpec<any>[] => [probeJob()];
