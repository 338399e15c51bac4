import { metricsDifferential } from '../support/metrics-differential';

// the metrics differential test (test/support/metrics-differential.ts), half 2 of its runs: the halves run side by side
metricsDifferential(1);
