import { competitorSuggestionsProjection } from '../../projections/competitor-suggestions';
import { entryOf } from '../../projections/activity';
import { factConflictsProjection } from '../../projections/fact-conflicts';
import { suggestionId } from '../../commands/entity-quality/suggestions';
import { entityQualityRoutes } from '../http/routes/entity-quality';
import { entityQualityTools } from '../mcp/tools/entity-quality';
import type { ModelId } from '../domain/models';
import { type EntityQualityDeps, factJudgeFollower, LIVE_BATCH } from '../workers/entity-quality';
import type { AreaManifest, AreaWorkerDeps } from './manifest';

/** Entity quality: competitor suggestions from the answers, and answers contradicting the brand's facts. */
export const entityQuality: AreaManifest<'competitor_suggestions' | 'fact_conflicts'> = {
  readModels: { competitor_suggestions: competitorSuggestionsProjection, fact_conflicts: factConflictsProjection },
  routes: entityQualityRoutes,
  tools: entityQualityTools,
  feed: {
    // a name has no id of its own: the entry carries one derived from the website and the name
    CompetitorSuggested: entryOf('competitor_suggestion', 'created', (e) => [suggestionId(e.data.website_id, e.data.key)]),
    CompetitorSuggestionDismissed: entryOf('competitor_suggestion', 'dismissed', (e) => [suggestionId(e.data.website_id, e.data.key)]),
    FactConflictDetected: entryOf('fact_conflict', 'detected', (e) => [e.data.conflict_id, e.data.fact_id]),
    FactConflictResolved: entryOf('fact_conflict', 'resolved', (e) => [e.data.conflict_id]),
    FactConflictDismissed: entryOf('fact_conflict', 'dismissed', (e) => [e.data.conflict_id]),
  },
  workers: [
    {
      start(deps) {
        const d = entityQualityDeps(deps);
        return deps.follow(factJudgeFollower(d), d.factJudge ? { batchSize: LIVE_BATCH } : {});
      },
    },
  ],
};

const entityQualityDeps = ({ config, store, db, engines, logger, waitForReadModels }: AreaWorkerDeps): EntityQualityDeps => ({
  store,
  db,
  logger,
  factJudge: engines.mode === 'simulated' ? undefined : { engines, model: config.contentModel as ModelId },
  waitForSuggestions: (p) => waitForReadModels(p, ['competitor_suggestions']),
  waitForConflicts: (p) => waitForReadModels(p, ['fact_conflicts']),
});
