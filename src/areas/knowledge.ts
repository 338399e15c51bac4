import { knowledgeProjection } from '../../projections/knowledge';
import { knowledgeRoutes } from '../http/routes/knowledge';
import { knowledgeTools } from '../mcp/tools/knowledge';
import { pillarResearchJob } from '../workers/pillar-research';
import { entriesOf, entry, entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** The knowledge base: pillars and their facts. */
export const knowledge: AreaManifest<'knowledge'> = {
  readModels: { knowledge: knowledgeProjection },
  routes: knowledgeRoutes,
  tools: knowledgeTools,
  jobs: { pillar_research: { requested: 'PillarResearchRequested', spec: (deps) => pillarResearchJob({ outbound: deps.outbound }) } },
  feed: {
    PillarCreated: entryOf('pillar', 'created', (e) => [e.data.pillar_id]),
    PillarUpdated: entryOf('pillar', 'updated', (e) => [e.data.pillar_id]),
    PillarResearched: entryOf('pillar', 'researched', (e) => [e.data.pillar_id]),
    // a text change is the new fact (listed with the one it replaced), then the old one archived
    FactRecorded: entriesOf(['fact.created', 'fact.updated'], (e) =>
      e.data.replaces ? entry('fact', 'updated', [e.data.fact_id, e.data.replaces]) : entry('fact', 'created', [e.data.fact_id]),
    ),
    FactReviewed: entriesOf(['fact.approved', 'fact.rejected'], (e) => entry('fact', e.data.review_status, [e.data.fact_id])),
    FactUpdated: entryOf('fact', 'updated', (e) => [e.data.fact_id]),
    FactArchived: entryOf('fact', 'archived', (e) => [e.data.fact_id]),
    FactsDeleted: entryOf('fact', 'deleted', (e) => e.data.fact_ids),
  },
  notInFeed: [
    { why: "a research job's request and steps: the pillar researched is the entry", types: ['PillarResearchRequested', 'PillarResearchStepDone'] },
  ],
};
