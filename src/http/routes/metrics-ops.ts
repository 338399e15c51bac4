import { resolveSelection } from '../../../queries/filters';
import { connectorRows, cumulative, type Family, timeSeries } from '../../../queries/metrics/metrics';
import { requireWebsite } from '../../../queries/access';
import type { SharedFilters } from '../../domain/filters';
import type { Reads } from '../route';
import { type Caller, dbOf } from './caller';
import { flagStale } from './stale';

/** The metrics read the answers read model's facts. */
const READS: Reads = ['answers'];

/** The metrics area as REST routes and MCP tools both run it: access, the filters resolved, the query. */
export const metricsOps = {
  async selection(c: Caller, websiteId: string, filters: SharedFilters | undefined) {
    const w = await requireWebsite(dbOf(c), c.principal, websiteId);
    return resolveSelection(dbOf(c), w.id, filters ?? {}, { prefix: 'filters' });
  },
  async cumulative(c: Caller, family: Family, websiteId: string, filters?: SharedFilters) {
    return flagStale(c, websiteId, READS, metricsOps.selection(c, websiteId, filters).then((sel) => cumulative(dbOf(c), sel, family)));
  },
  async timeSeries(c: Caller, family: Family, websiteId: string, filters?: SharedFilters) {
    return flagStale(c, websiteId, READS, metricsOps.selection(c, websiteId, filters).then((sel) => timeSeries(dbOf(c), sel, family)));
  },
  async connector(c: Caller, websiteId: string, filters: SharedFilters | undefined, page: { page_num: number; page_size: number }) {
    return flagStale(c, websiteId, READS, metricsOps.selection(c, websiteId, filters).then((sel) => connectorRows(dbOf(c), sel, page)));
  },
};
