import type { Knex } from 'knex';
import type { ContentStage, ContentType } from '../../src/domain/content';
import { pushRunAtRange, type Selection } from '../filters';
import type { SiteFacts } from '../metrics/facts/layout';
import { factsCache } from '../metrics/metrics';
import { type CompiledSelection, compileSelection, eachSelectedAnswer, scanTotal } from '../metrics/scan';
import type { ContentListView, ContentPromptsView } from './views';
import { newestFirst, onePageAndMore, pageInfo, pageRows } from '../paging';
import { iso, isoOrNull } from '../timestamps';

/** Which items the listing shows (besides the website): the tab, the types, the stage. */
export interface ItemFilter {
  /** a sheet-type tab: its items; undefined: every item */
  sheetId?: string;
  types?: readonly ContentType[];
  stage?: ContentStage;
  /** only items with a URL (tracked pages, published items): what citations can be joined to */
  withUrl?: boolean;
}

/** Which answers the figures count: the shared filters' selection, and whether the brand is mentioned. */
export interface AnswerFilter {
  selection: Selection;
  mentioned?: boolean;
}

/**
 * The selection as SQL over a table with the answer columns of rm_content_answers (`t`): the same rule as the answers
 * listing's (queries/responses/list.ts selectAnswers).
 */
function answersWhere(t: string, f: AnswerFilter): { sql: string; bindings: Knex.RawBinding[] } {
  const s = f.selection;
  // `schedule_id is not distinct from ?` spelled as the planner can estimate it (it takes the former for a row or two,
  // and then plans nested loops over every selected answer)
  const parts = [
    `${t}.website_id = ?`,
    s.scheduleId === null ? `${t}.schedule_id is null` : `${t}.schedule_id = ?`,
    `${t}.prompt_id = any(?::uuid[])`,
  ];
  const bindings: Knex.RawBinding[] = s.scheduleId === null ? [s.websiteId, s.promptIds] : [s.websiteId, s.scheduleId, s.promptIds];
  pushRunAtRange(t, s, parts, bindings);
  if (s.models) {
    parts.push(`${t}.model = any(?::text[])`);
    bindings.push(s.models);
  }
  if (s.locationIds) {
    parts.push(`${t}.location_id = any(?::uuid[])`);
    bindings.push(s.locationIds);
  }
  if (f.mentioned !== undefined) {
    parts.push(`${t}.mentioned = ?`);
    bindings.push(f.mentioned);
  }
  return { sql: parts.join(' and '), bindings };
}

/**
 * The selected answers' count from the metric facts (the answers read model's own analysis, held in process): the
 * selection's answers, or those mentioning the brand (`mentioned`: true) or not (false). The same rule as answersWhere.
 */
async function selectedFacts(db: Knex, f: AnswerFilter): Promise<{ site: SiteFacts; q: CompiledSelection; brand: number }> {
  const site = await factsCache(db).get(db, f.selection.websiteId);
  // every entity asked for (a day without other filters is then read from its sums); the brand is the website's own
  // entity, whose id is the website's: its column, -1 while it has no facts
  return { site, q: compileSelection(site, f.selection, site.entities), brand: site.entities.indexOf(f.selection.websiteId) };
}

async function selectedCount(db: Knex, f: AnswerFilter): Promise<number> {
  const { site, q, brand: column } = await selectedFacts(db, f);
  const c = scanTotal(site, q);
  const brand = column < 0 ? 0 : c.mentioned[column];
  return f.mentioned === undefined ? c.responses : f.mentioned ? brand : c.responses - brand;
}

/** The selected answers per prompt id (answers of the brand-mention filter only, as selectedCount), from the metric facts. */
async function selectedPerPrompt(db: Knex, f: AnswerFilter): Promise<Map<string, number>> {
  const { site, q, brand } = await selectedFacts(db, f);
  const counts = new Float64Array(Math.max(1, site.prompts.size));
  const E = site.entities.length;
  eachSelectedAnswer(site, q, (d, i) => {
    if (f.mentioned !== undefined && (brand >= 0 && d.pos[i * E + brand] !== 0) !== f.mentioned) return;
    counts[d.prompt[i]]++;
  });
  const out = new Map<string, number>();
  site.prompts.keys.forEach((id, i) => {
    if (counts[i] > 0) out.set(id, counts[i]);
  });
  return out;
}

const percent = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((10000 * part) / whole) / 100);

/**
 * A page of the website's items, newest first, each with its citation figures over the selected answers
 * (CONTRACT.md, Listing figures): `total_responses` their count, `citations` those citing the item's normalized URL
 * (engine citations or URLs in the text, normalized as everywhere: rm_content_cites), `citation_percent` the ratio.
 */
export async function listContent(
  db: Knex,
  websiteId: string,
  items: ItemFilter,
  answers: AnswerFilter,
  page: { page_num: number; page_size: number },
): Promise<ContentListView> {
  const q = db('rm_content as c')
    .leftJoin('rm_content_sheets as s', 's.sheet_id', 'c.sheet_id')
    .leftJoin('rm_topics as t', 't.id', 'c.topic_id')
    .where('c.website_id', websiteId);
  if (items.sheetId) q.where('c.sheet_id', items.sheetId);
  if (items.types) q.whereIn('c.type', items.types as ContentType[]);
  if (items.stage) q.where('c.stage', items.stage);
  if (items.withUrl) q.whereNotNull('c.normalized_url');
  const where = answersWhere('a', answers);
  // the page first (an index range), then the answers' count and the page's citations side by side
  const rows = (await onePageAndMore(q.orderBy(newestFirst('c.created_at', 'c.content_id')), page).select(
    'c.content_id',
    'c.title',
    'c.url',
    'c.normalized_url',
    'c.type',
    'c.stage',
    't.name as topic_name',
    'c.sheet_id',
    's.name as sheet_name',
    'c.mark_as_done_time',
    'c.created_at',
    'c.updated_at',
  )) as Record<string, unknown>[];
  const shown = pageRows(rows, page);
  const urls = [...new Set(shown.flatMap((r) => (typeof r.normalized_url === 'string' ? [r.normalized_url] : [])))];
  const selects = answers.selection.promptIds.length > 0;
  const [total, cites] = await Promise.all([
    selects ? selectedCount(db, answers) : Promise.resolve(0),
    urls.length && selects
      ? db
          .raw(
            `select a.normalized_url, count(*)::int as n from rm_content_cites a where a.normalized_url = any(?::text[]) and ${where.sql} group by a.normalized_url`,
            [urls, ...where.bindings],
          )
          .then((r) => new Map((r.rows as { normalized_url: string; n: number }[]).map((x) => [x.normalized_url, x.n])))
      : Promise.resolve(new Map<string, number>()),
  ]);
  return {
    content: shown.map((r) => {
      const citations = typeof r.normalized_url === 'string' ? (cites.get(r.normalized_url) ?? 0) : 0;
      return {
        content_id: r.content_id as string,
        title: r.title as string,
        url: r.url as string | null,
        normalized_url: r.normalized_url as string | null,
        type: r.type as ContentType,
        stage: r.stage as ContentStage | null,
        topic_name: r.topic_name as string | null,
        sheet_id: r.sheet_id as string | null,
        sheet_name: r.sheet_name as string | null,
        citations,
        citation_percent: percent(citations, total),
        total_responses: total,
        mark_as_done_time: isoOrNull(r.mark_as_done_time as Date | null),
        created_at: iso(r.created_at as Date),
        updated_at: iso(r.updated_at as Date),
      };
    }),
    pagination: pageInfo(rows, page),
  };
}

/**
 * Per prompt, the selected answers citing one item and their share of that prompt's selected answers; prompts with
 * at least one citing answer, most citations first.
 */
export async function contentPrompts(
  db: Knex,
  item: { content_id: string; url: string | null; normalized_url: string | null },
  answers: AnswerFilter,
): Promise<ContentPromptsView> {
  const out: ContentPromptsView = { content_id: item.content_id, content_url: item.url, content_normalized_url: item.normalized_url, prompts: [] };
  if (item.normalized_url === null || answers.selection.promptIds.length === 0) return out;
  const where = answersWhere('a', answers);
  // the citing answers per prompt (SQL), beside the selected answers per prompt (the metric facts)
  const [r, totals] = await Promise.all([
    db.raw(
      `with c as (
         select a.prompt_id, count(*)::int as n from rm_content_cites a where a.normalized_url = ? and ${where.sql} group by a.prompt_id
       )
       select c.prompt_id, c.n as citations, coalesce(p.text, '') as prompt from c left join rm_prompts p on p.id = c.prompt_id`,
      [item.normalized_url, ...where.bindings],
    ),
    selectedPerPrompt(db, answers),
  ]);
  out.prompts = (r.rows as { prompt_id: string; citations: number; prompt: string }[])
    .map((x) => ({
      prompt_id: x.prompt_id,
      prompt: x.prompt,
      citations: x.citations,
      citation_percent: percent(x.citations, totals.get(x.prompt_id) ?? 0),
    }))
    .sort((a, b) => b.citations - a.citations || a.prompt.localeCompare(b.prompt) || a.prompt_id.localeCompare(b.prompt_id));
  return out;
}
