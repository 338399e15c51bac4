import { metricsDifferential } from '../support/metrics-differential';

// the metrics differential test (test/support/metrics-differential.ts), half 1 of its runs: the halves run side by side
metricsDifferential(0);
