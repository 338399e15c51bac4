import type { Knex } from 'knex';

/**
 * The brand's published content for the contribution (docs/VALUATION.md, section 6): content hub items of the website
 * with a URL that are live pages of the brand — tracked pages of its own domain (`imported`, `manual`) and generated
 * pages once published — never `external` ones.
 */
const OWN_LIVE = `k.normalized_url is not null and k.type <> 'external' and (k.mark_as_done_time is not null or k.type in ('imported', 'manual'))`;

export const NO_PUBLISHED_CONTENT = 'the website has no published page of its own in the content hub yet: no answer can be attributed to its content';
export const NO_CONTENT_HUB = "the content hub's read model is not available in this deployment: no answer can be attributed to the brand's content";

/**
 * Of the answers in [start, end) of live prompts that mention the brand, the share citing one of its published pages,
 * from the content hub's own join of answers and cited URLs (rm_content_answers, rm_content_cites).
 */
export async function attributedShare(
  db: Knex,
  websiteId: string,
  start: Date,
  end: Date,
): Promise<{ attributed_share: number; mentioned: number; attributed: number } | { unavailable: string }> {
  const hub = await db.raw(`select to_regclass('rm_content_cites') is not null and to_regclass('rm_content') is not null as ok`);
  if (!hub.rows[0].ok) return { unavailable: NO_CONTENT_HUB };
  const r = await db.raw(
    `with pages as (select k.normalized_url from rm_content k where k.website_id = :site and ${OWN_LIVE}),
          w as (select a.response_id from rm_content_answers a
                  join rm_prompts p on p.id = a.prompt_id and p.soft_deleted_at is null
                 where a.website_id = :site and a.run_at >= :start and a.run_at < :end and a.mentioned)
     select (select count(*) from pages)::int as pages,
            (select count(*) from w)::int as mentioned,
            (select count(*) from w where exists (
               select 1 from rm_content_cites c join pages on pages.normalized_url = c.normalized_url where c.response_id = w.response_id
            ))::int as attributed`,
    { site: websiteId, start: start.toISOString(), end: end.toISOString() },
  );
  const { pages, mentioned, attributed } = r.rows[0] as { pages: number; mentioned: number; attributed: number };
  if (pages === 0) return { unavailable: NO_PUBLISHED_CONTENT };
  return { attributed_share: mentioned === 0 ? 0 : attributed / mentioned, mentioned, attributed };
}
