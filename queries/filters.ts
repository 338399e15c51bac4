import type { Knex } from 'knex';
import { parseFilterDate } from '../src/domain/dates';
import { DomainErrorException, invalid, notFound } from '../src/domain/errors';
import type { SharedFilters } from '../src/domain/filters';
import { isUuid } from '../src/domain/ids';
import { isModelId } from '../src/domain/models';

/**
 * A selection's time range as SQL conditions on `alias`.run_at, both ends inclusive and either one optional: pushed onto
 * a statement's conditions and their bindings.
 */
export function pushRunAtRange(alias: string, range: Pick<Selection, 'start' | 'end'>, parts: string[], bindings: Knex.RawBinding[]): void {
  if (range.start) {
    parts.push(`${alias}.run_at >= ?`);
    bindings.push(range.start);
  }
  if (range.end) {
    parts.push(`${alias}.run_at <= ?`);
    bindings.push(range.end);
  }
}

/** The answers a request selects, every reference checked against the website's catalogue. */
export interface Selection {
  websiteId: string;
  /** null: the default schedule (answers without a schedule) */
  scheduleId: string | null;
  start?: Date;
  end?: Date;
  /** undefined: every model */
  models?: string[];
  /** the prompts whose answers count: never soft-deleted ones; narrowed by prompt_ids, status, type (and a view's tags) */
  promptIds: string[];
  /** undefined: every location (and answers without one) */
  locationIds?: string[];
  /** undefined: every competitor */
  competitorIds?: string[];
  /** the saved view applied, if any */
  savedViewId?: string;
}

export const SAVED_VIEW_NOT_FOUND = 'Saved view not found';

const fail = (message: string): never => {
  throw new DomainErrorException(invalid(message));
};

/** The first id of `ids` that is not in `known`, as an error naming its place. */
function checkIds(field: string, ids: readonly string[] | undefined, known: Set<string>, what: string) {
  ids?.forEach((id, i) => {
    if (!known.has(id.toLowerCase())) fail(`${field}[${i}]: no ${what} of this website has this id`);
  });
}

/** What a saved view stores that metrics reproduce; anything else it stores (other pages' filters) changes nothing. */
interface ViewFilters {
  schedule_id?: string | null;
  start_date?: Date;
  end_date?: Date;
  models?: string[];
  prompt_ids?: string[];
  location_ids?: string[];
  competitor_ids?: string[];
  prompt_status?: 'active' | 'paused';
  prompt_type?: 'branded' | 'non_branded';
  prompt_tags?: string[];
  prompt_tags_operator?: 'any' | 'all';
}

const ids = (v: unknown) => (Array.isArray(v) ? v.filter(isUuid).map((x) => x.toLowerCase()) : undefined);
const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/**
 * A view's stored filters, as metrics read them. `models_not` ("models is not any of") cannot be reproduced: unless the
 * request sends `models` (which replaces it), it is refused naming it. Stored dates that no longer parse are named too.
 */
function viewFilters(stored: Record<string, unknown>, request: SharedFilters, at: (f: string) => string): ViewFilters {
  const v: ViewFilters = {};
  if (stored.models_not !== undefined && request.models === undefined) {
    fail(
      `${at('saved_view_id')}: the saved view filters on models_not ("models is not any of"), which the API cannot reproduce; send ${at('models')} to replace it`,
    );
  }
  if (typeof stored.schedule_id === 'string')
    v.schedule_id = stored.schedule_id === 'default' || stored.schedule_id === 'manual' ? null : stored.schedule_id.toLowerCase();
  for (const side of ['start', 'end'] as const) {
    const raw = stored[`${side}_date`];
    if (typeof raw !== 'string') continue;
    const d = parseFilterDate(raw, side);
    if (!d.ok) fail(`${at('saved_view_id')}: the saved view's ${side}_date is not a date (${d.error}); send ${at(`${side}_date`)} to replace it`);
    else v[`${side}_date`] = d.value;
  }
  const models = strings(stored.models);
  if (models) v.models = models.filter(isModelId);
  v.prompt_ids = ids(stored.prompt_ids);
  v.location_ids = ids(stored.location_ids);
  v.competitor_ids = ids(stored.competitor_ids);
  if (stored.prompt_status === 'active' || stored.prompt_status === 'paused') v.prompt_status = stored.prompt_status;
  if (stored.prompt_type === 'branded' || stored.prompt_type === 'non_branded') v.prompt_type = stored.prompt_type;
  v.prompt_tags = strings(stored.prompt_tags);
  if (stored.prompt_tags_operator === 'all' || stored.prompt_tags_operator === 'any') v.prompt_tags_operator = stored.prompt_tags_operator;
  return v;
}

/** The filters a request applies: its own, else its saved view's (the view counts active prompts only unless it says). */
function merged(request: SharedFilters, view: ViewFilters) {
  return {
    schedule_id: request.schedule_id !== undefined ? request.schedule_id : view.schedule_id,
    start_date: request.start_date ?? view.start_date,
    end_date: request.end_date ?? view.end_date,
    models: request.models ?? view.models,
    prompt_ids: request.prompt_ids ?? view.prompt_ids,
    location_ids: request.location_ids ?? view.location_ids,
    competitor_ids: request.competitor_ids ?? view.competitor_ids,
    prompt_status: request.prompt_status ?? view.prompt_status ?? (request.saved_view_id ? ('active' as const) : undefined),
    prompt_type: request.prompt_type ?? view.prompt_type,
    prompt_tags: view.prompt_tags?.length ? view.prompt_tags : undefined,
    prompt_tags_operator: view.prompt_tags_operator,
  };
}

/** A request's filters merged with its saved view's (merged), computed once per selection. */
type Merged = ReturnType<typeof merged>;

/** A prompt of the website, as a selection reads it. */
export interface SelectablePrompt {
  id: string;
  status: string;
  type: string;
  tags: string[];
}

/**
 * What a selection is checked and narrowed against, read from the website's catalogue: its prompts not soft-deleted;
 * every prompt id (soft-deleted ones included) when the request sends prompt_ids; its location ids when the filters
 * name locations; its competitors not removed when they name competitors; whether the schedule named exists.
 */
export interface SelectionCatalogue {
  prompts: SelectablePrompt[];
  allPromptIds: string[] | null;
  locations: string[] | null;
  competitors: string[] | null;
  scheduleFound: boolean;
}

/** What of the catalogue a request needs (SelectionCatalogue), so a caller reading it in its own statement reads no more. */
export function catalogueNeeds(
  request: SharedFilters,
): { allPromptIds: boolean; locations: boolean; competitors: boolean; schedule: string | null } | null {
  // a saved view decides what else is needed: resolveSelection reads it first
  if (request.saved_view_id) return null;
  return {
    allPromptIds: request.prompt_ids !== undefined,
    locations: request.location_ids !== undefined,
    competitors: request.competitor_ids !== undefined,
    schedule: request.schedule_id ?? null,
  };
}

/**
 * Resolves the shared filters of one website. `prefix` names the object in messages (`filters`). With a saved view:
 * the request's dates always win over the view's range, any filter sent next to it replaces the view's value for that
 * field, and the view counts active prompts only and every model unless it says otherwise. A view's references
 * that no longer exist select nothing; the request's own references must exist (400 naming the field).
 */
export async function resolveSelection(db: Knex, websiteId: string, request: SharedFilters, options: { prefix?: string } = {}): Promise<Selection> {
  const at = (field: string) => (options.prefix ? `${options.prefix}.${field}` : field);
  let view: ViewFilters = {};
  if (request.saved_view_id) {
    const stored = await db('rm_saved_views').where({ website_id: websiteId, id: request.saved_view_id }).first('filters');
    if (!stored) throw new DomainErrorException(notFound(SAVED_VIEW_NOT_FOUND));
    view = viewFilters(stored.filters as Record<string, unknown>, request, at);
  }
  const f = merged(request, view);
  checkRange(f, at);
  const [prompts, locations, competitors, schedule] = await Promise.all([
    db('rm_prompts').where('website_id', websiteId).whereNull('soft_deleted_at').select('id', 'status', 'type', 'tags'),
    f.location_ids ? db('rm_locations').where('website_id', websiteId).pluck('id') : Promise.resolve(null),
    f.competitor_ids ? db('rm_competitors').where('website_id', websiteId).whereNull('removed_at').pluck('id') : Promise.resolve(null),
    f.schedule_id ? db('rm_prompt_schedules').where({ website_id: websiteId, id: f.schedule_id }).first('id') : Promise.resolve(null),
  ]);
  if (request.schedule_id && !schedule) fail(`${at('schedule_id')}: no schedule of this website has this id`);
  // ids of soft-deleted prompts are still this website's: they select nothing
  const allPromptIds = request.prompt_ids ? ((await db('rm_prompts').where('website_id', websiteId).pluck('id')) as string[]) : null;
  return selectionFrom(
    websiteId,
    request,
    f,
    { prompts: prompts as SelectablePrompt[], allPromptIds, locations, competitors, scheduleFound: schedule !== undefined && schedule !== null },
    at,
  );
}

const checkRange = (f: Merged, at: (field: string) => string) => {
  if (f.start_date && f.end_date && f.end_date.getTime() < f.start_date.getTime()) {
    fail(`${at('end_date')}: is before start_date (${f.start_date.toISOString()})`);
  }
};

/**
 * The selection of a request without a saved view, over its catalogue read by the caller (catalogueNeeds says what
 * to read): the same checks and the same answers as resolveSelection, without its reads.
 */
export function selectionOf(websiteId: string, request: SharedFilters, catalogue: SelectionCatalogue, options: { prefix?: string } = {}): Selection {
  const at = (field: string) => (options.prefix ? `${options.prefix}.${field}` : field);
  if (request.saved_view_id) throw new Error('selectionOf: a saved view is resolved by resolveSelection');
  const f = merged(request, {});
  checkRange(f, at);
  if (request.schedule_id && !catalogue.scheduleFound) fail(`${at('schedule_id')}: no schedule of this website has this id`);
  return selectionFrom(websiteId, request, f, catalogue, at);
}

function selectionFrom(
  websiteId: string,
  request: SharedFilters,
  f: Merged,
  catalogue: SelectionCatalogue,
  at: (field: string) => string,
): Selection {
  const { prompts, locations, competitors } = catalogue;
  if (request.prompt_ids) checkIds(at('prompt_ids'), request.prompt_ids, new Set(catalogue.allPromptIds ?? []), 'prompt');
  if (request.location_ids && locations) checkIds(at('location_ids'), request.location_ids, new Set(locations), 'location');
  if (request.competitor_ids && competitors) checkIds(at('competitor_ids'), request.competitor_ids, new Set(competitors), 'competitor');
  const wanted = f.prompt_ids ? new Set(f.prompt_ids.map((p) => p.toLowerCase())) : null;
  const tags = f.prompt_tags ?? null;
  const promptIds = prompts
    .filter(
      (p) => (!wanted || wanted.has(p.id)) && (!f.prompt_status || p.status === f.prompt_status) && (!f.prompt_type || p.type === f.prompt_type),
    )
    .filter((p) => !tags || (f.prompt_tags_operator === 'all' ? tags.every((t) => p.tags.includes(t)) : tags.some((t) => p.tags.includes(t))))
    .map((p) => p.id);
  // a view's competitors that were removed since select nothing
  const liveCompetitors = competitors ? new Set(competitors) : null;
  return {
    websiteId,
    scheduleId: f.schedule_id ?? null,
    start: f.start_date,
    end: f.end_date,
    models: f.models ? [...new Set(f.models)] : undefined,
    promptIds,
    locationIds: f.location_ids ? [...new Set(f.location_ids.map((l) => l.toLowerCase()))] : undefined,
    competitorIds: f.competitor_ids
      ? [...new Set(f.competitor_ids.map((c) => c.toLowerCase()))].filter((c) => !liveCompetitors || liveCompetitors.has(c))
      : undefined,
    savedViewId: request.saved_view_id,
  };
}
