import { entriesOf, entry, entryOf } from '../../projections/activity';
import { alertsProjection } from '../../projections/alerts';
import { alertRoutes } from '../http/routes/alerts';
import { alertTools } from '../mcp/tools/alerts';
import { ALERT_BUS_TYPES, accessCheckThrough, startAlertWorkers } from '../workers/alerts';
import type { AreaManifest } from './manifest';

/** Alert rules and the alerts they fire; evaluated at a run's end, after an import and daily (src/workers/alerts.ts). */
export const alerts: AreaManifest<'alerts'> = {
  readModels: { alerts: alertsProjection },
  routes: alertRoutes,
  tools: alertTools,
  feed: {
    AlertRuleCreated: entryOf('alert_rule', 'created', (e) => [e.data.rule_id], 'website_id'),
    AlertRuleUpdated: entryOf('alert_rule', 'updated', (e) => [e.data.rule_id]),
    AlertRuleDeleted: entryOf('alert_rule', 'deleted', (e) => [e.data.rule_id]),
    // the alert's own feed entry is this event, delivered as alert.fired (src/workers/webhooks.ts)
    AlertFired: entriesOf(['alert.fired'], (e) => entry('alert', 'fired', [e.data.alert.id], e.data.alert.website_id)),
    AlertAcknowledged: entryOf('alert', 'acknowledged', (e) => [e.data.alert_id]),
  },
  workers: [
    {
      busTypes: ALERT_BUS_TYPES,
      start: ({ config, db, store, bus, logger, now, outbound, waitForReadModels }) =>
        startAlertWorkers({
          db,
          store,
          bus,
          logger,
          now,
          waitForReadModels: (p) => waitForReadModels(p, ['runs', 'answers', 'alerts']),
          daily: config.scheduler,
          checkAccess: accessCheckThrough(outbound),
        }),
    },
  ],
};
