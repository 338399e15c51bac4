import { z } from 'zod';
import { type DomainError, invalid, isDomainError } from '../../src/domain/errors';
import type { DomainEvent, EventData } from '../../src/domain/events';
import { deterministicId, newId } from '../../src/domain/ids';
import { parseFilterDate } from '../../src/domain/dates';
import { modelIdSchema } from '../../src/domain/models';
import { boundedString, label, text, Uuid, WebsiteId } from '../../src/domain/schemas';
import { type Position, StoredEventsError } from '../../src/eventstore/port';
import { type CatalogState, handleCatalog } from '../catalog/catalog';
import { Bool } from '../catalog/catalog-input';
import { type CommandContext, type Decision, newEventsFor } from '../handle';

export const MAX_IMPORT = 1000;
/**
 * An answer's time (CONTRACT.md, Answer times): from 2000-01-01T00:00:00Z (no answer engine answered before; and the
 * read models' timestamps hold it) to one day after this server's clock (time zones and clock skew), no further.
 */
export const EARLIEST_RUN_AT = '2000-01-01T00:00:00Z';
const EARLIEST_RUN_AT_MS = Date.parse(EARLIEST_RUN_AT);
export const RUN_AT_AHEAD_MS = 86_400_000;

const HttpUrl = text()
  .max(2048, 'must be at most 2048 characters')
  .refine((s) => {
    try {
      const u = new URL(s.trim());
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

const RunAt = text('must be an ISO 8601 date-time').transform((s, ctx) => {
  const r = parseFilterDate(s, 'start', { allowDateOnly: false });
  if (!r.ok) {
    ctx.addIssue({ code: 'custom', message: r.error });
    return z.NEVER;
  }
  if (r.value.getTime() < EARLIEST_RUN_AT_MS) {
    ctx.addIssue({ code: 'custom', message: `must not be before ${EARLIEST_RUN_AT}` });
    return z.NEVER;
  }
  if (r.value.getTime() > Date.now() + RUN_AT_AHEAD_MS) {
    ctx.addIssue({ code: 'custom', message: "must not be more than one day after the server's time" });
    return z.NEVER;
  }
  return r.value.toISOString();
});

const nonBlank = (max: number) =>
  text()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => s.trim() !== '', 'must not be empty');
/** An optional list of at most `max` items (`error`: what a value that is no list is told). */
const upTo = <T extends z.ZodType>(max: number, item: T, error: string) =>
  z.array(item, { error }).max(max, `must have at most ${max} items`).optional();

const ImportProduct = z.strictObject({
  name: label(500).describe("The product's name on the card (up to 500 characters)"),
  brand: label(200).nullable().optional().describe("The product's brand (up to 200 characters)"),
  merchant: label(200).nullable().optional().describe('The merchant offering it (up to 200 characters)'),
  price: z
    .number({ error: 'must be a number' })
    .nonnegative('must not be negative')
    .finite()
    .nullable()
    .optional()
    .describe('The price shown, not negative'),
  currency: text()
    .regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 code')
    .nullable()
    .optional()
    .describe("The price's currency, a three-letter ISO 4217 code"),
  position: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(1000, 'must be at most 1000')
    .describe("The card's 1-based position in the answer (1 to 1000)"),
  url: HttpUrl.nullable().optional().describe("The product page's http(s) URL"),
});

export const ImportObservation = z
  .strictObject({
    entity_id: Uuid.describe('The website_id for the brand itself, otherwise a competitor id of the website'),
    attribute_id: Uuid.describe('An attribute of the website'),
    positive: Bool.describe('true = praises, false = criticizes'),
    score: z
      .number({ error: 'must be a number' })
      .finite()
      .nullable()
      .optional()
      .describe('-1 to 1, its sign that of positive, magnitude 0.1 to 1.0 = strength of wording; null or omitted = not scored'),
    text_span: boundedString(2000).describe('The supporting excerpt of the answer (up to 2000 characters)'),
  })
  .superRefine((o, ctx) => {
    if (o.score === null || o.score === undefined) return;
    if (Math.abs(o.score) < 0.1 || Math.abs(o.score) > 1) {
      ctx.addIssue({ code: 'custom', path: ['score'], message: 'must be from -1 to -0.1 or from 0.1 to 1 (magnitude 0.1 to 1.0)' });
    } else if (o.score > 0 !== o.positive) {
      ctx.addIssue({
        code: 'custom',
        path: ['score'],
        message: `its sign must match positive (${o.positive}): ${o.positive ? 'above' : 'below'} zero`,
      });
    }
  });

export const ImportItem = z.strictObject({
  external_id: label(200).optional().describe('Your id for the answer (up to 200 characters): an external_id already imported is skipped'),
  prompt_id: Uuid.describe('The prompt of the website this answers'),
  model: modelIdSchema.describe('The model identifier that answered'),
  run_at: RunAt.describe(`When it answered: an ISO 8601 date-time (no zone = UTC), from ${EARLIEST_RUN_AT} to one day after the server's time`),
  text: nonBlank(100_000).describe('The answer text (up to 100000 characters)'),
  citations: upTo(200, HttpUrl, 'must be an array of URLs').describe('The http(s) URLs the answer cites (at most 200)'),
  retrieved: upTo(500, HttpUrl, 'must be an array of URLs').describe('The http(s) URLs the engine read or was given, cited or not (at most 500)'),
  search_queries: upTo(50, nonBlank(1000), 'must be an array of strings').describe('The queries the engine searched (at most 50)'),
  location_id: Uuid.nullable().optional().describe('The location of the website it was asked from; null or omitted = none'),
  persona_id: Uuid.nullable().optional().describe('The persona of the website it was asked as; null or omitted = none'),
  schedule_id: Uuid.nullable().optional().describe('The custom schedule it belongs to; null or omitted = default'),
  products: upTo(50, ImportProduct, 'must be an array').describe('The product cards shown with the answer (at most 50)'),
  observations: upTo(200, ImportObservation, 'must be an array').describe(
    "The answer's attribute observations (at most 200); when sent, even empty, they are used instead of finding them in the text",
  ),
});
export type ImportItem = z.output<typeof ImportItem>;

export const ImportResponses = z.strictObject({
  website_id: WebsiteId,
  responses: z
    .array(ImportItem, { error: 'must be an array of responses' })
    .min(1, 'must have at least 1 item')
    .max(MAX_IMPORT, `must have at most ${MAX_IMPORT} items`)
    .describe(`1 to ${MAX_IMPORT} answers, imported all or none`),
});
export type ImportResponses = z.output<typeof ImportResponses>;

export interface ImportResult {
  imported: number;
  skipped: number;
  /** one per item, in order; a skipped item's is the answer already imported under its external_id */
  response_ids: string[];
}

/** The answer id of an external id: a re-import finds the same answer. */
export const importedResponseId = (websiteId: string, externalId: string) => deterministicId('imported-response', websiteId, externalId);

interface Planned {
  item: ImportItem;
  response_id: string;
  skip: boolean;
}

/** Every reference of every item checked against the catalogue; the first bad one names its item. */
function checkReferences(s: CatalogState, websiteId: string, items: ImportItem[]): DomainError | null {
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    const at = `responses[${i}]`;
    const p = s.prompts.get(it.prompt_id);
    if (!p || p.hard_deleted) return invalid(`${at}.prompt_id: Prompt not found`);
    if (it.location_id && !s.locations.has(it.location_id)) return invalid(`${at}.location_id: Location not found`);
    if (it.persona_id && !s.personas.has(it.persona_id)) return invalid(`${at}.persona_id: Persona not found`);
    if (it.schedule_id && !s.schedules.has(it.schedule_id)) return invalid(`${at}.schedule_id: Schedule not found`);
    for (let j = 0; j < (it.observations ?? []).length; j++) {
      const o = it.observations![j];
      if (o.entity_id !== websiteId && !s.competitors.has(o.entity_id)) {
        return invalid(`${at}.observations[${j}].entity_id: must be the website_id (the brand) or one of its competitors' ids`);
      }
      if (!s.attributes.has(o.attribute_id)) return invalid(`${at}.observations[${j}].attribute_id: Attribute not found`);
    }
  }
  return null;
}

/**
 * Checks the import against the catalogue and marks the prompts answered for the first time (the same marker the
 * workers write, so a later delete keeps their history). Items whose external_id is already imported, or repeated
 * earlier in the call, are skipped. `responseIds`: one new id per item, for the items without an external_id.
 */
export function decideImport(
  s: CatalogState,
  websiteId: string,
  input: ImportResponses,
  alreadyImported: ReadonlySet<string>,
  responseIds: readonly string[],
): Decision<Planned[]> | DomainError {
  const bad = checkReferences(s, websiteId, input.responses);
  if (bad) return bad;
  const seen = new Set<string>();
  const planned = input.responses.map((item, i): Planned => {
    if (item.external_id === undefined) return { item, response_id: responseIds[i], skip: false };
    const skip = alreadyImported.has(item.external_id) || seen.has(item.external_id);
    seen.add(item.external_id);
    return { item, response_id: importedResponseId(websiteId, item.external_id), skip };
  });
  const first = [...new Set(planned.filter((x) => !x.skip).map((x) => x.item.prompt_id))].filter((id) => !s.prompts.get(id)!.has_answers);
  return { events: first.map((prompt_id) => ({ type: 'PromptAnswered', data: { prompt_id } })), result: planned };
}

function importEvents(websiteId: string, planned: Planned[]): (DomainEvent & { id: string })[] {
  const events: (DomainEvent & { id: string })[] = [];
  for (const { item, response_id, skip } of planned) {
    if (skip) continue;
    const recorded: EventData<'ResponseRecorded'> = {
      response_id,
      website_id: websiteId,
      prompt_id: item.prompt_id,
      model: item.model,
      location_id: item.location_id ?? null,
      persona_id: item.persona_id ?? null,
      schedule_id: item.schedule_id ?? null,
      run_id: null,
      request_id: null,
      external_id: item.external_id ?? null,
      run_at: item.run_at,
      text: item.text,
      citations: (item.citations ?? []).map((c) => c.trim()),
      products: item.products ?? [],
      source: 'import',
      observations_supplied: item.observations !== undefined,
      provider_model: null,
      latency_ms: null,
      ...(item.retrieved?.length ? { retrieved: item.retrieved.map((u) => u.trim()) } : {}),
      ...(item.search_queries?.length ? { search_queries: item.search_queries.map((q) => q.trim()) } : {}),
    };
    events.push({ id: deterministicId('recorded', response_id), type: 'ResponseRecorded', data: recorded });
    if (item.observations?.length) {
      events.push({
        id: deterministicId('observations', response_id),
        type: 'ObservationsRecorded',
        data: {
          response_id,
          website_id: websiteId,
          prompt_id: item.prompt_id,
          location_id: item.location_id ?? null,
          schedule_id: item.schedule_id ?? null,
          model: item.model,
          observed_at: item.run_at,
          extractor: 'import',
          observations: item.observations.map((o, j) => ({
            observation_id: deterministicId('observation', response_id, String(j)),
            entity_id: o.entity_id,
            attribute_id: o.attribute_id,
            positive: o.positive,
            score: o.score ?? null,
            text_span: o.text_span,
          })),
        },
      });
    }
  }
  return events;
}

export const importStream = (importId: string) => `import-${importId}`;

/** Decisions of one import before its append gives up: each refusal adds at least one known id, so this is ample. */
const IMPORT_ATTEMPTS = 20;

/**
 * Imports up to 1000 answers in one append: all of them or none. They go through exactly the analysis of a streamed
 * answer. `already_imported`: the external ids the website's answers read model has. The counts are what this call
 * stored: the append refuses answer ids another import stored meanwhile (a concurrent import of the same file, or one
 * the read model has not applied yet), and the import is decided again with those as skips, so of N imports racing
 * for an answer exactly one reports it imported and the others skipped, in the result and in ResponsesImported.
 */
export async function importResponses(
  ctx: CommandContext,
  input: ImportResponses & { already_imported: ReadonlySet<string> },
): Promise<{ result: ImportResult; position: Position | null } | DomainError> {
  const websiteId = input.website_id;
  const alreadyImported = input.already_imported;
  const responseIds = input.responses.map(() => newId());
  const importId = newId();
  const known = new Set(alreadyImported);
  for (let attempt = 1; ; attempt++) {
    const marked = await handleCatalog(ctx, websiteId, (s) => decideImport(s, websiteId, input, known, responseIds));
    if (isDomainError(marked)) return marked;
    const planned = marked.result;
    const imported = planned.filter((p) => !p.skip).length;
    const result: ImportResult = { imported, skipped: planned.length - imported, response_ids: planned.map((p) => p.response_id) };
    const events = importEvents(websiteId, planned);
    events.push({
      id: importId,
      type: 'ResponsesImported',
      data: {
        import_id: importId,
        website_id: websiteId,
        response_ids: planned.filter((p) => !p.skip).map((p) => p.response_id),
        imported,
        skipped: result.skipped,
      },
    });
    try {
      const r = await ctx.store.append(importStream(importId), newEventsFor({ ...ctx, websiteId }, events), 'no_stream', { storedIds: 'refuse' });
      return { result, position: r.position };
    } catch (err) {
      if (!(err instanceof StoredEventsError) || attempt >= IMPORT_ATTEMPTS) throw err;
      // the answers another import stored are this one's skips; anything else refused is not an import's answer
      const externalOf = new Map<string, string>();
      for (const p of planned) {
        if (p.item.external_id === undefined) continue;
        externalOf.set(deterministicId('recorded', p.response_id), p.item.external_id);
        externalOf.set(deterministicId('observations', p.response_id), p.item.external_id);
      }
      const taken = err.ids.map((id) => externalOf.get(id.toLowerCase()));
      if (taken.some((x) => x === undefined)) throw err;
      for (const x of taken) known.add(x!);
    }
  }
}
