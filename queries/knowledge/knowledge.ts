import type { Knex } from 'knex';
import { isUuid } from '../../src/domain/ids';
import type { ApprovedFacts, FactsPage, FactView, PillarView, SearchAnswer } from './views';
import { newestFirst, onePageAndMore, pageInfo, pageRows } from '../paging';
import { iso, isoOrNull } from '../timestamps';

const PILLAR_COLUMNS = ['id', 'name', 'description', 'status', 'last_researched_at', 'created_at'];
const FACT_COLUMNS = [
  'id',
  'website_id',
  'pillar_id',
  'text',
  'source_url',
  'source_quote',
  'confidence',
  'review_status',
  'source_type',
  'response_id',
  'duplicate_of',
  'created_at',
  'updated_at',
];

type Row = Record<string, any>;

const pillarView = (r: Row): PillarView => ({
  id: r.id,
  name: r.name,
  description: r.description,
  status: r.status,
  last_researched_at: isoOrNull(r.last_researched_at),
  created_at: iso(r.created_at),
});

export const factView = (r: Row): FactView => ({
  id: r.id,
  website_id: r.website_id,
  pillar_id: r.pillar_id,
  text: r.text,
  source_url: r.source_url,
  source_quote: r.source_quote,
  confidence: r.confidence,
  review_status: r.review_status,
  source_type: r.source_type,
  response_id: r.response_id,
  duplicate_of: r.duplicate_of,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export async function getPillar(db: Knex, websiteId: string, pillarId: string): Promise<PillarView | undefined> {
  const r = await db('rm_kb_pillars').where({ id: pillarId, website_id: websiteId }).first(PILLAR_COLUMNS);
  return r ? pillarView(r) : undefined;
}

/** The website's pillars, oldest first. */
export async function listPillars(db: Knex, websiteId: string): Promise<PillarView[]> {
  const rows = await db('rm_kb_pillars')
    .where('website_id', websiteId)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(PILLAR_COLUMNS);
  return rows.map(pillarView);
}

/** Where a pillar or fact lives, by its id alone (routes that address one by id): its organization and website. */
export async function locate(db: Knex, kind: 'pillar' | 'fact', id: string): Promise<{ organization_id: string; website_id: string } | undefined> {
  return db(kind === 'pillar' ? 'rm_kb_pillars' : 'rm_kb_facts')
    .where('id', id)
    .first('organization_id', 'website_id');
}

/** A fact, archived ones included (a PATCH's `before`). */
export async function getFact(db: Knex, websiteId: string, factId: string): Promise<FactView | undefined> {
  const r = await db('rm_kb_facts').where({ id: factId, website_id: websiteId }).first(FACT_COLUMNS);
  return r ? factView(r) : undefined;
}

/** A fact that is listed: not archived. */
export async function getLiveFact(db: Knex, websiteId: string, factId: string): Promise<FactView | undefined> {
  const r = await db('rm_kb_facts').where({ id: factId, website_id: websiteId }).whereNull('archived_at').first(FACT_COLUMNS);
  return r ? factView(r) : undefined;
}

export interface FactFilters {
  pillar_id?: string;
  unfiled?: boolean;
  review_status?: 'pending' | 'approved' | 'rejected';
  include_oracle: boolean;
  include_duplicates: boolean;
  page_num: number;
  page_size: number;
}

/**
 * A page of the website's facts, newest first: never archived ones; hidden duplicates only when asked; facts from
 * automated analysis (`oracle`) only with include_oracle.
 */
export async function listFacts(db: Knex, websiteId: string, f: FactFilters): Promise<FactsPage> {
  const q = db('rm_kb_facts').where('website_id', websiteId).whereNull('archived_at');
  if (f.pillar_id !== undefined) q.where('pillar_id', f.pillar_id);
  if (f.unfiled) q.whereNull('pillar_id');
  if (f.review_status) q.where('review_status', f.review_status);
  if (!f.include_oracle) q.whereNot('source_type', 'oracle');
  if (!f.include_duplicates) q.whereNull('duplicate_of');
  const rows = await onePageAndMore(q.orderBy(newestFirst('created_at', 'id')), f).select(FACT_COLUMNS);
  return { facts: pageRows(rows, f).map(factView), ...pageInfo(rows, f) };
}

/**
 * Full-text search over the website's approved facts (Postgres `websearch_to_tsquery`, English stemming: quoted
 * phrases, `or`, `-word`), best first by `ts_rank`. Hidden duplicates and archived facts are not searched.
 */
export async function searchFacts(db: Knex, websiteId: string, query: string, limit: number): Promise<SearchAnswer> {
  const rows = await db.raw(
    `select ${FACT_COLUMNS.map((c) => `f.${c}`).join(', ')}, ts_rank(f.tsv, q) as rank
       from rm_kb_facts f, websearch_to_tsquery('english'::regconfig, ?) q
      where f.website_id = ? and f.archived_at is null and f.duplicate_of is null and f.review_status = 'approved'
        and f.tsv @@ q
      order by rank desc, f.created_at desc, f.id
      limit ?`,
    [query, websiteId, limit],
  );
  return { facts: (rows.rows as Row[]).map((r) => ({ ...factView(r), rank: Number(r.rank) })) };
}

/**
 * For grounded content generation: the website's approved facts among `ids` (live, not hidden duplicates), in the
 * order asked, and the ids that are not such a fact (unknown, another website's, pending, rejected, archived, deleted).
 * The content pipeline refuses a request naming any id of `not_approved_ids` (400) and gives the writer `facts` only.
 */
export async function approvedFactsByIds(db: Knex, websiteId: string, ids: readonly string[]): Promise<ApprovedFacts> {
  const unique = [...new Set(ids)];
  const valid = unique.filter(isUuid);
  if (!valid.length) return { facts: [], not_approved_ids: unique };
  const rows = (await db('rm_kb_facts')
    .where('website_id', websiteId)
    .whereIn('id', valid)
    .whereNull('archived_at')
    .whereNull('duplicate_of')
    .where('review_status', 'approved')
    .select(FACT_COLUMNS)) as Row[];
  const byId = new Map(rows.map((r) => [r.id as string, factView(r)]));
  return {
    facts: unique.flatMap((id) => byId.get(id) ?? []),
    not_approved_ids: unique.filter((id) => !byId.has(id)),
  };
}

/** An approved fact as the SEO job weighs it against a page. */
export interface ApprovedFactText {
  id: string;
  text: string;
  confidence: 'high' | 'medium' | 'low';
}

/**
 * The website's approved facts for the SEO job, newest first, up to `limit`: live (not archived), not hidden
 * duplicates, approved (pending and rejected ones never, whatever their source; automated analysis' facts only once
 * approved). Deleted facts have no row.
 */
export async function approvedFactTexts(db: Knex, websiteId: string, limit: number): Promise<ApprovedFactText[]> {
  return db('rm_kb_facts')
    .where({ website_id: websiteId, review_status: 'approved' })
    .whereNull('archived_at')
    .whereNull('duplicate_of')
    .orderBy(newestFirst('created_at', 'id'))
    .limit(limit)
    .select('id', 'text', 'confidence');
}

/**
 * The texts of the website's facts among `ids` that still exist (archived ones keep their row until deleted): an SEO
 * recommendation names its fact by id and shows its text only while the fact is there, so a deleted fact's text
 * never shows.
 */
export async function factTextsByIds(db: Knex, websiteId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const valid = [...new Set(ids)].filter(isUuid);
  if (!valid.length) return new Map();
  const rows = (await db('rm_kb_facts').where('website_id', websiteId).whereIn('id', valid).select('id', 'text')) as { id: string; text: string }[];
  return new Map(rows.map((r) => [r.id, r.text]));
}
