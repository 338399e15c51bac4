import { probeJob } from '../workers/probe';
import type { AreaManifest } from './manifest';

/** The probe job: an operator's check that jobs run. */
export const probe: AreaManifest = {
  jobs: { probe: { requested: 'ProbeRequested', spec: () => probeJob() } },
  notInFeed: [{ why: "an operator's check of the job machinery, no resource", types: ['ProbeRequested', 'ProbeStepCompleted'] }],
};
