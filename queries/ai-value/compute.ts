import type { Knex } from 'knex';
import { attributedShare } from './attribution';
import { valuationInput, WINDOW_MS } from './counts';
import { ASSUMPTIONS, GATHERING_THRESHOLD, valuate } from './model';
import type { Valuation } from './views';

export interface Computed {
  computed_at: string;
  facts_version: string;
  measured_responses: number;
  assumptions_version: string;
  /** null while gathering (under 50 answers in the trailing 28 days) */
  valuation: Valuation | null;
}

/** One computation of the website's AI search value over the 28 days before `at`. */
export async function computeValuation(db: Knex, websiteId: string, at: Date): Promise<Computed> {
  const [input, attribution] = await Promise.all([
    valuationInput(db, websiteId, at),
    attributedShare(db, websiteId, new Date(at.getTime() - WINDOW_MS), at),
  ]);
  const gathering = input.measured_responses < GATHERING_THRESHOLD;
  return {
    computed_at: at.toISOString(),
    facts_version: input.factsVersion,
    measured_responses: input.measured_responses,
    assumptions_version: ASSUMPTIONS.assumptions_version,
    valuation: gathering ? null : valuate({ ...input, attribution }),
  };
}
