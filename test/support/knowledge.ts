import { randomUUID } from 'node:crypto';
import { type Candidate, decideRecordCandidates } from '../../commands/knowledge/facts';
import { Knowledge, knowledgeStream } from '../../commands/knowledge/knowledge';
import { handle } from '../../commands/handle';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { pillarResearchJob } from '../../src/workers/pillar-research';
import { fakeResolver } from './net';
import type { ServerRuntimeOptions, TestServer } from './server';

/**
 * Facts as research records them (pending, with their provenance), written through the knowledge decider as the
 * research job does: for tests that need answers' or analysis' facts without running a research job.
 */
export async function researched(
  s: TestServer,
  organizationId: string,
  websiteId: string,
  pillarId: string,
  facts: (Partial<Candidate> & { text: string })[],
): Promise<string[]> {
  const candidates: Candidate[] = facts.map((f) => ({
    fact_id: randomUUID(),
    pillar_id: pillarId,
    source_url: null,
    source_quote: f.text,
    confidence: 'medium',
    source_type: 'ai_response',
    response_id: randomUUID(),
    job_id: randomUUID(),
    ...f,
  }));
  const h = await handle({ store: s.rt.store, organizationId, websiteId, actor: SYSTEM_ACTOR }, knowledgeStream(websiteId), Knowledge, (st) =>
    decideRecordCandidates(st, websiteId, candidates),
  );
  if (isDomainError(h)) throw new Error(h.message);
  await s.rt.waitForReadModels(h.position, ['knowledge']);
  return candidates.map((c) => c.fact_id);
}

/**
 * Server options whose pillar research reaches nothing outside (every host name fails to resolve, as a site that does
 * not exist would): the research of a test's pillars finds only what the website's answers hold.
 */
export const offlineResearch = (): ServerRuntimeOptions => ({
  jobs: { specs: [pillarResearchJob({ outbound: { fetch: createSafeFetcher({ resolver: fakeResolver({}) }) } })] },
});
