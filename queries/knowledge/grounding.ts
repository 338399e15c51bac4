import type { Knex } from 'knex';
import { isUuid } from '../../src/domain/ids';
import { approvedFactsByIds } from './knowledge';

/** The most facts one generation is grounded on: the kept ones first, then the topics' approved facts. */
export const MAX_GROUNDING_FACTS = 100;

/** Of `ids`, those that are not pillars (knowledge-base topics) of the website. */
export async function notPillarIds(db: Knex, websiteId: string, ids: readonly string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const valid = unique.filter(isUuid);
  const found = valid.length
    ? new Set((await db('rm_kb_pillars').where('website_id', websiteId).whereIn('id', valid).pluck('id')) as string[])
    : new Set();
  return unique.filter((id) => !found.has(id));
}

/** The approved facts (live, not hidden duplicates) filed under the pillars, high confidence first, then newest; `except` left out. */
export async function approvedFactIdsOfPillars(
  db: Knex,
  websiteId: string,
  pillarIds: readonly string[],
  except: readonly string[],
  limit: number,
): Promise<string[]> {
  if (!pillarIds.length || limit <= 0) return [];
  const q = db('rm_kb_facts')
    .where('website_id', websiteId)
    .whereIn('pillar_id', [...pillarIds])
    .whereNull('archived_at')
    .whereNull('duplicate_of')
    .where('review_status', 'approved');
  if (except.length) q.whereNotIn('id', [...except]);
  return (await q
    .orderByRaw(`case confidence when 'high' then 0 when 'medium' then 1 else 2 end`)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(limit)
    .pluck('id')) as string[];
}

/**
 * What the content job gives the writer: the texts of the generation's grounding facts that are still approved facts
 * of the website when it writes (one deleted, edited or rejected since the request is left out), and their ids, which
 * the version records.
 */
export async function groundingFacts(
  db: Knex,
  websiteId: string,
  factIds: readonly string[] | undefined,
): Promise<{ facts: string[]; fact_ids: string[] }> {
  if (!factIds?.length) return { facts: [], fact_ids: [] };
  const { facts } = await approvedFactsByIds(db, websiteId, factIds);
  return { facts: facts.map((f) => f.text), fact_ids: facts.map((f) => f.id) };
}
