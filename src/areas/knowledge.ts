import { knowledgeProjection } from '../../projections/knowledge';
import { knowledgeRoutes } from '../http/routes/knowledge';
import { knowledgeTools } from '../mcp/tools/knowledge';
import { pillarResearchJob } from '../workers/pillar-research';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** The knowledge base: pillars and their facts. */
export const knowledge: AreaManifest<'knowledge'> = {
  readModels: { knowledge: knowledgeProjection },
  routes: knowledgeRoutes,
  tools: knowledgeTools,
  jobs: { pillar_research: { requested: 'PillarResearchRequested', spec: (deps) => pillarResearchJob({ outbound: deps.outbound }) } },
  feed: {
    PillarCreated: (e) => entry('pillar', 'created', [e.data.pillar_id]),
    PillarUpdated: (e) => entry('pillar', 'updated', [e.data.pillar_id]),
    PillarResearched: (e) => entry('pillar', 'researched', [e.data.pillar_id]),
    // a text change is the new fact (listed with the one it replaced), then the old one archived
    FactRecorded: (e) => (e.data.replaces ? entry('fact', 'updated', [e.data.fact_id, e.data.replaces]) : entry('fact', 'created', [e.data.fact_id])),
    FactReviewed: (e) => entry('fact', e.data.review_status, [e.data.fact_id]),
    FactUpdated: (e) => entry('fact', 'updated', [e.data.fact_id]),
    FactArchived: (e) => entry('fact', 'archived', [e.data.fact_id]),
    FactsDeleted: (e) => entry('fact', 'deleted', e.data.fact_ids),
  },
  notInFeed: [
    { why: "a research job's request and steps: the pillar researched is the entry", types: ['PillarResearchRequested', 'PillarResearchStepDone'] },
  ],
};
