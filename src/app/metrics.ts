import { resolveSelection } from '../../queries/filters';
import { connectorRows, cumulative as total, type Family, timeSeries as daily } from '../../queries/metrics/metrics';
import type { SharedFilters } from '../domain/filters';
import type { Need } from '../domain/principal';
import { type Caller, dbOf, flagStale, type Reads, websiteFor } from './context';

/** The metrics read the answers read model's facts. */
const READS: Reads = ['answers'];
const VIEW: Need = { category: 'analytics', level: 'view' };

/** The website's answers the filters select (saved view included; 400 naming a bad filter under `filters`). */
async function selection(c: Caller, websiteId: string, filters: SharedFilters | undefined) {
  const w = await websiteFor(c, websiteId, VIEW);
  return resolveSelection(dbOf(c), w.id, filters ?? {}, { prefix: 'filters' });
}

/** One value per brand over the selection; flagged stale when the website's facts wait behind a set-aside event. */
export async function cumulative(c: Caller, family: Family, websiteId: string, filters?: SharedFilters) {
  return flagStale(
    c,
    websiteId,
    READS,
    selection(c, websiteId, filters).then((sel) => total(dbOf(c), sel, family)),
  );
}

/** One row per UTC day with answers, oldest first. */
export async function timeSeries(c: Caller, family: Family, websiteId: string, filters?: SharedFilters) {
  return flagStale(
    c,
    websiteId,
    READS,
    selection(c, websiteId, filters).then((sel) => daily(dbOf(c), sel, family)),
  );
}

/** The reporting connector's flat rows. */
export async function connector(c: Caller, websiteId: string, filters: SharedFilters | undefined, page: { page_num: number; page_size: number }) {
  return flagStale(
    c,
    websiteId,
    READS,
    selection(c, websiteId, filters).then((sel) => connectorRows(dbOf(c), sel, page)),
  );
}
