import { creditsProjection } from '../../projections/credits';
import { creditsRoutes } from '../http/routes/credits';
import { creditsTools } from '../mcp/tools/credits';
import { entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Credits granted and spent. */
export const credits: AreaManifest<'credits'> = {
  readModels: { credits: creditsProjection },
  routes: creditsRoutes,
  tools: creditsTools,
  feed: {
    CreditsGranted: entryOf('credit_grant', 'created', (e) => [e.data.grant_id], null),
  },
  notInFeed: [{ why: 'spending, one per answer or step: the credits ledger shows it', types: ['CreditsUsed', 'CreditsCharged'] }],
};
