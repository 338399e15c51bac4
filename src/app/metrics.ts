import { catalogueNeeds, resolveSelection, type Selection, selectionOf } from '../../queries/filters';
import { inScope, WEBSITE_FORBIDDEN } from '../../queries/access';
import * as metricsQueries from '../../queries/metrics/metrics';
import { connectorRows, type Family, type Read } from '../../queries/metrics/metrics';
import { readForMetricsGrouped } from '../../queries/metrics/request';
import * as compareQueries from '../../queries/metrics/compare';
import type { CompareInput, StabilityInput } from '../domain/comparison';
import { DomainErrorException, forbidden, notFound } from '../domain/errors';
import type { SharedFilters } from '../domain/filters';
import { authorize, type Need } from '../domain/principal';
import { type Caller, dbOf, flagStale, type Reads, websiteFor } from './context';

/** The metrics read the answers read model's facts. */
const READS: Reads = ['answers'];
const VIEW: Need = { category: 'analytics', level: 'view' };

/** The website's answers the filters select (saved view included; 400 naming a bad filter under `filters`). */
async function selection(c: Caller, websiteId: string, filters: SharedFilters | undefined, prefix = 'filters') {
  const w = await websiteFor(c, websiteId, VIEW);
  return resolveSelection(dbOf(c), w.id, filters ?? {}, { prefix });
}

/**
 * A family's read: without a saved view, everything but the facts' new days is read in one statement (readForMetrics,
 * one for the concurrent requests of a website: readForMetricsGrouped) and checked as websiteFor, resolveSelection and flagStale check it, in their order; with one, through them.
 */
async function metricRead<T extends object>(
  c: Caller,
  websiteId: string,
  filters: SharedFilters | undefined,
  compute: (sel: Selection, read?: Read) => Promise<T>,
  prefix = 'filters',
): Promise<T | (T & { stale: true })> {
  const needs = catalogueNeeds(filters ?? {});
  if (!needs)
    return flagStale(
      c,
      websiteId,
      READS,
      selection(c, websiteId, filters, prefix).then((sel) => compute(sel)),
    );
  const r = await readForMetricsGrouped(dbOf(c), websiteId, needs, READS);
  const p = c.principal;
  if (!r.website) throw new DomainErrorException(notFound('Website not found'));
  if (r.website.organization_id !== p.organizationId || !inScope(p, websiteId) || r.website.status === 'paused' || r.website.status === 'deleted')
    throw new DomainErrorException(forbidden(WEBSITE_FORBIDDEN));
  authorize(p, VIEW, websiteId);
  const sel = selectionOf(websiteId, filters ?? {}, r.catalogue, { prefix });
  const body = await compute(sel, { entities: r.entities, head: r.head });
  return r.stale ? { ...body, stale: true as const } : body;
}

/** One value per brand over the selection; flagged stale when the website's facts wait behind a set-aside event. */
export async function cumulative(c: Caller, family: Family, websiteId: string, filters?: SharedFilters) {
  return metricRead(c, websiteId, filters, (sel, read) => metricsQueries.cumulative(dbOf(c), sel, family, read));
}

/** One row per UTC day with answers, oldest first. */
export async function timeSeries(c: Caller, family: Family, websiteId: string, filters?: SharedFilters) {
  return metricRead(c, websiteId, filters, (sel, read) => metricsQueries.timeSeries(dbOf(c), sel, family, read));
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

/** Each entity's value in two periods, the change with its 95% interval, p-value and verdict (the filters apply to both). */
export async function comparePeriods(c: Caller, input: CompareInput) {
  return metricRead(
    c,
    input.website_id,
    input.filters,
    (sel, read) => compareQueries.comparePeriods(dbOf(c), sel, input.metric, input.current, input.previous, read),
    '',
  );
}

/** Per (prompt, model), how steadily the brand is mentioned from day to day over the range. */
export async function promptStability(c: Caller, input: StabilityInput) {
  return metricRead(
    c,
    input.website_id,
    input.filters,
    (sel, read) => compareQueries.promptStability(dbOf(c), { ...sel, start: input.range.start, end: input.range.end }, read),
    '',
  );
}
